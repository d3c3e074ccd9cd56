// What src/ may import: no cycles, and the layering of docs/ARCHITECTURE.md ("Layers"). Checked by
// `npm run check:deps` (dependency-cruiser) in CI, right after the type-check. Type-only imports count
// as imports here (tsPreCompilationDeps): a cycle through a type is a cycle all the same, since each
// type belongs in one module and the modules that use it import that one.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment:
        "Modules that import each other, directly or through others: one of them holds something that " +
        "belongs elsewhere (most often a type in the module of its first user). Move it to the module it " +
        "belongs to, or have the lower module say what it needs (an interface of its own) instead of " +
        "importing its user.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "no-circular-folders",
      comment:
        "Folders (subsystems) that import each other, even through modules that form no cycle: one of " +
        "them holds something of the other's. Move it to the folder below.",
      severity: "error",
      scope: "folder",
      from: {},
      to: { circular: true },
    },
    {
      name: "product-not-on-tools",
      comment:
        "The product (everything in src/ but src/cli, src/lab and src/testweb) never imports the CLI, " +
        "the crawl laboratory or the synthetic test web: those sit on top of it. What both a tool and " +
        "the product need goes below both (as the flag parser and the agent's flag table are in " +
        "src/flags, which src/launch and src/cli use).",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/(cli|lab|testweb)/" },
      to: { path: "^src/(cli|lab|testweb)/" },
    },
    {
      name: "lab-not-on-cli",
      comment:
        "The CLI is the top layer: `ubicrawl experiment` runs the laboratory, so the laboratory never " +
        "imports the CLI. What an experiment needs of the flags is in src/flags.",
      severity: "error",
      from: { path: "^src/lab/" },
      to: { path: "^src/cli/" },
    },
    {
      name: "testweb-not-on-lab-or-cli",
      comment:
        "The test web is served by `ubicrawl testweb` and crawled by the laboratory's experiments, so it " +
        "imports neither: it sits below both, on the product alone.",
      severity: "error",
      from: { path: "^src/testweb/" },
      to: { path: "^src/(cli|lab)/" },
    },
    {
      name: "not-to-unresolvable",
      comment:
        "An import dependency-cruiser cannot resolve escapes every rule above: resolve it (a missing " +
        "file, or a package that is not installed).",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // Type-only imports are dependencies too (see the comment at the top).
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "node_modules" },
    // Packages resolved as Node resolves them for this ESM project (their `exports` maps), so that
    // imports such as "csv-stringify/sync" resolve.
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      mainFields: ["module", "main", "types", "typings"],
    },
  },
};
