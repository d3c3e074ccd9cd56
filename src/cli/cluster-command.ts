/** placeholder */
export async function clusterCommand(_argv: string[]): Promise<number> {
  return 2;
}
