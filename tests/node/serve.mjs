// Starts `ggserve serve ARGS...` (ARGS include --port 0) and resolves {proc, url} once the server logs that
// it listens and is ready; rejects if it exits first. Shared by the client tests in this folder.
import { spawn } from "node:child_process";

export function startServer(binary, args) {
  const proc = spawn(binary, ["serve", ...args], { stdio: ["ignore", "ignore", "pipe"] });
  return new Promise((resolve, reject) => {
    let port = null, log = "";
    proc.on("exit", (code) => reject(new Error(`server exited early (${code}):\n${log}`)));
    proc.stderr.on("data", (chunk) => {
      log += chunk.toString();
      const m = log.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
      if (m) port = m[1];
      if (port && log.includes("ready:")) resolve({ proc, url: `http://127.0.0.1:${port}` });
    });
  });
}
