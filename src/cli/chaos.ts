export async function chaos(_argv: string[]): Promise<number> {
  return 0;
}
