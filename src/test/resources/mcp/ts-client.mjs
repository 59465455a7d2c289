// The official TypeScript MCP client against /mcp: connects with a bearer token over Streamable
// HTTP, lists the tools and asks. Prints one JSON line: the tools' names and the ask's result.
// Usage: node ts-client.mjs URL TOKEN REPOSITORY ISSUE   (run by TypeScriptClientTest)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, repository, issue] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "agentx-ts-test", version: "1" });
await client.connect(transport);
const tools = (await client.listTools()).tools.map((t) => t.name);
const asked = await client.callTool({
  name: "clarify_ask",
  arguments: { repository, issue: Number(issue), to: "architect", question: "Which queue, from TypeScript?" },
});
console.log(JSON.stringify({ protocol: transport.protocolVersion ?? null, tools, asked }));
await transport.terminateSession();
await client.close();
