/** The probe report as JUnit XML, for CI systems that show test results. */
import { tally, type ProbeReport } from './model.js';

/** XML-escaped, without the control characters XML 1.0 forbids. */
const escape = (s: string): string =>
  [...s]
    .filter((c) => c >= ' ' || c === '\n' || c === '\t' || c === '\r')
    .join('')
    .replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** One `<testcase>` per check: FAIL is a `<failure>`, not applicable is `<skipped>`. */
export function renderJunit(report: ProbeReport): string {
  const t = tally(report.checks);
  const seconds = (ms: number): string => (ms / 1000).toFixed(3);
  const total = report.checks.reduce((sum, c) => sum + c.ms, 0);
  const cases = report.checks.map((c) => {
    const head = `    <testcase classname="mcp-continuity.probe" name="${escape(`${c.id}: ${c.title}`)}" time="${seconds(c.ms)}">`;
    const body =
      c.verdict === 'FAIL'
        ? `\n      <failure type="${escape(c.severity ?? 'deviation')}" message="${escape(c.detail)}">${escape(`guards: ${c.guards}\n\n${c.evidence.join('\n\n')}`)}</failure>\n    `
        : c.verdict === 'n/a'
          ? `\n      <skipped message="${escape(c.detail)}"/>\n    `
          : `\n      <system-out>${escape(c.detail)}</system-out>\n    `;
    return `${head}${body}</testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="mcp-continuity probe" tests="${report.checks.length}" failures="${t.FAIL}" skipped="${t['n/a']}" time="${seconds(total)}">`,
    `  <testsuite name="${escape(report.url)}" tests="${report.checks.length}" failures="${t.FAIL}" skipped="${t['n/a']}" timestamp="${report.startedAt}" time="${seconds(total)}">`,
    '    <properties>',
    `      <property name="era" value="${escape(report.server.era)}"/>`,
    `      <property name="overall" value="${escape(report.overall.line)}"/>`,
    `      <property name="remediation" value="${escape(report.overall.remediation)}"/>`,
    '    </properties>',
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
