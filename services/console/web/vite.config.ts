/** Builds the console's pages into dist/web; scripts/build-web.ts runs it and checks the budget. */
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  build: {
    outDir: "../dist/web",
    emptyOutDir: true,
    // The CSP allows no inline code: every script and style is a file.
    assetsInlineLimit: 0,
    sourcemap: false,
  },
});
