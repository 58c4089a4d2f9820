// A scripted MCP client on the official TypeScript SDK, driven by the Go
// end-to-end tests (deploy/e2e/clients_test.go): argv[2] is a JSON plan,
// stdout one JSON line with what every step saw. The Go test asserts.
//
// plan: {transport: "http"|"stdio", url, headers, protocolVersion,
//        oauth: {clientId, clientSecret, expectedIssuer},
//        command, args, env, steps: [...]}
// steps: {op: "call", name, arguments, repeat} -> [{isError, text}]
//        {op: "sleep", ms}
//        {op: "listResources"} -> {uris, pages} (follows nextCursor to the end)
//        {op: "readResource", uri} -> {text} or {error}
//        {op: "listTemplates"} -> {templates}
//        {op: "listTools"} -> {tools}
// With no steps and transport "http" it only connects; a failure to connect
// is reported as {connectError}. {op: "discover"} (alone) asks the server
// without a key and follows OAuth discovery as the SDK does.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { discoverOAuthProtectedResourceMetadata, extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js";
import { ClientCredentialsProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js";

const plan = JSON.parse(process.argv[2]);

// A tool answer's text, its middle cut out: the tests read its start (the
// answer) and its end (the budget's notes), and pipes stay small.
function textOf(res) {
  const text = (res.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
  return text.length > 800 ? text.slice(0, 300) + " [...] " + text.slice(-400) : text;
}

// The SDK always offers its latest protocol version; an older client is
// played by rewriting the version its initialize offers.
function pinVersion(transport, version) {
  if (!version) return transport;
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (message.method === "initialize") {
      message = { ...message, params: { ...message.params, protocolVersion: version } };
    }
    return send(message, options);
  };
  return transport;
}

async function discover() {
  const res = await fetch(plan.url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "discover", version: "1" } } }),
  });
  const params = extractWWWAuthenticateParams(res);
  const challenged = await discoverOAuthProtectedResourceMetadata(plan.url, { resourceMetadataUrl: params.resourceMetadataUrl });
  const wellKnown = await discoverOAuthProtectedResourceMetadata(plan.url);
  return {
    status: res.status,
    wwwAuthenticate: res.headers.get("www-authenticate"),
    resourceMetadataUrl: params.resourceMetadataUrl ? String(params.resourceMetadataUrl) : "",
    challenged,
    wellKnown,
  };
}

async function main() {
  if (plan.steps?.length === 1 && plan.steps[0].op === "discover") {
    return { steps: [await discover()] };
  }
  const client = new Client({ name: plan.clientName || "strata-ts-e2e", version: "1.0.0" });
  let transport;
  if (plan.transport === "stdio") {
    transport = new StdioClientTransport({ command: plan.command, args: plan.args || [], env: plan.env, stderr: "ignore" });
  } else {
    // With plan.oauth the SDK authenticates itself: on the 401 it follows
    // resource_metadata to the authorization server and gets a token with
    // the client_credentials grant.
    const authProvider = plan.oauth ? new ClientCredentialsProvider(plan.oauth) : undefined;
    transport = new StreamableHTTPClientTransport(new URL(plan.url), { requestInit: { headers: plan.headers || {} }, authProvider });
  }
  try {
    await client.connect(pinVersion(transport, plan.protocolVersion));
  } catch (e) {
    return { connectError: String(e && e.message ? e.message : e), code: e?.code };
  }
  const out = { protocolVersion: transport.protocolVersion || "", sessionId: transport.sessionId || "", steps: [] };
  for (const step of plan.steps || []) {
    switch (step.op) {
      case "call": {
        const calls = [];
        for (let i = 0; i < (step.repeat || 1); i++) {
          const res = await client.callTool({ name: step.name, arguments: step.arguments || {} });
          calls.push({ isError: !!res.isError, text: textOf(res) });
        }
        out.steps.push(calls);
        break;
      }
      case "sleep":
        await new Promise((r) => setTimeout(r, step.ms));
        out.steps.push(null);
        break;
      case "listResources": {
        const uris = [];
        let cursor, pages = 0;
        do {
          const res = await client.listResources(cursor ? { cursor } : {});
          pages++;
          for (const r of res.resources) uris.push(r.uri);
          cursor = res.nextCursor;
        } while (cursor && pages < 1000);
        out.steps.push({ uris, pages });
        break;
      }
      case "readResource":
        try {
          const res = await client.readResource({ uri: step.uri });
          out.steps.push({ text: res.contents.map((c) => c.text).join("") });
        } catch (e) {
          out.steps.push({ error: String(e.message || e) });
        }
        break;
      case "listTemplates": {
        const res = await client.listResourceTemplates();
        out.steps.push({ templates: res.resourceTemplates.map((t) => t.uriTemplate) });
        break;
      }
      case "listTools": {
        const res = await client.listTools();
        out.steps.push({ tools: res.tools.map((t) => t.name) });
        break;
      }
      default:
        throw new Error("unknown step " + step.op);
    }
  }
  await client.close();
  return out;
}

main().then(
  // Exit only once stdout is flushed: a pipe takes large writes in parts.
  (out) => process.stdout.write(JSON.stringify(out) + "\n", () => process.exit(0)),
  (e) => { process.stderr.write(String(e && e.stack ? e.stack : e) + "\n"); process.exit(1); },
);
