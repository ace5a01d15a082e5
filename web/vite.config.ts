// Builds one self-contained index.html (scripts and styles inlined) that CMake embeds into the
// trainsim binary (cmake/web.cmake); `trainsim serve` answers "/" with it.
import { defineConfig } from "vite";
import { viteSingleFile } from "vite-plugin-singlefile";

export default defineConfig({
  plugins: [viteSingleFile()],
  // `npm run dev`: the page with hot reload, the API from a `trainsim serve` on port 8080.
  server: { proxy: { "/v1": "http://127.0.0.1:8080" } },
  build: {
    target: "es2020",
    outDir: process.env.TRAINSIM_WEB_OUT || "dist",
    emptyOutDir: true,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 2000,
  },
});
