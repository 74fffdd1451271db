export async function demo(_argv: string[]): Promise<number> {
  return 0;
}
