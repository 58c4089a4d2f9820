package tools

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/cursor"
	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
)

// BenchmarkToolCallInProcess measures what queryd adds to a tool call
// before and after the index reads (an in-memory fake here): JSON-RPC
// dispatch, input schema validation, argument decoding, the handler and the
// answer's encoding. Profile it with -cpuprofile to see where a call goes.
func BenchmarkToolCallInProcess(b *testing.B) {
	s := newServer(&testing.T{})
	keys, err := auth.ParseKeys("test-key-0123456789=*")
	if err != nil {
		b.Fatal(err)
	}
	p, _ := keys.Lookup("test-key-0123456789")
	ctx := auth.WithPrincipal(context.Background(), p)
	chunk := index().chunks["acme"][2].ID
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"get_file_chunk", map[string]any{"project_reference": "acme", "chunk_id": chunk}},
		{"list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "a.md"}},
		{"search_keyword", map[string]any{"query": "chunk"}},
	} {
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
			"params": map[string]any{"name": c.name, "arguments": c.args}})
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				resp := s.HandleMessage(ctx, body)
				if _, err := json.Marshal(resp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkToolCallOverHTTP is BenchmarkToolCallInProcess through mcp-go's
// streamable HTTP server and client on loopback, as agents call queryd:
// the difference between the two is the transport's share.
func BenchmarkToolCallOverHTTP(b *testing.B) {
	s := newServer(&testing.T{})
	keys, err := auth.ParseKeys("test-key-0123456789=*")
	if err != nil {
		b.Fatal(err)
	}
	c := httpClient(b, s, keys)
	ctx := context.Background()
	req := mcp.CallToolRequest{}
	req.Params.Name = "get_file_chunk"
	req.Params.Arguments = map[string]any{"project_reference": "acme", "chunk_id": index().chunks["acme"][2].ID}
	for b.Loop() {
		res, err := c.CallTool(ctx, req)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkListFileChunksLarge is list_file_chunks' full page (100 chunks
// of about 600 bytes) in process and over HTTP: the cost of a large answer.
func BenchmarkListFileChunksLarge(b *testing.B) {
	f := index()
	fileID := ids.File("acme", "", "big.md")
	fv := ids.FileVersion(fileID, "e", "s")
	f.docs["acme"] = append(f.docs["acme"], store.Document{FileID: fileID, FilePath: "big.md", FileVersionID: fv, Status: pipeline.StatusIndexed})
	for i := range 100 {
		f.chunks["acme"] = append(f.chunks["acme"], store.Chunk{ID: ids.Chunk(fv, i), FileID: fileID, FileVersionID: fv, FilePath: "big.md",
			Index: i, Content: strings.Repeat("lorem ipsum dolor sit amet ", 22), EndOffset: 600})
	}
	signer, _ := cursor.NewSigner("test-secret-0123456789")
	s := server.NewMCPServer("strata", "test", server.WithToolCapabilities(false))
	New(f, signer, slog.New(slog.DiscardHandler)).Register(s)
	keys, _ := auth.ParseKeys("test-key-0123456789=*")
	p, _ := keys.Lookup("test-key-0123456789")
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "list_file_chunks", "arguments": map[string]any{"project_reference": "acme", "file_path": "big.md"}}})
	b.Run("in-process", func(b *testing.B) {
		ctx := auth.WithPrincipal(context.Background(), p)
		for b.Loop() {
			out, err := json.Marshal(s.HandleMessage(ctx, body))
			if err != nil || len(out) < 100*600 {
				b.Fatal(err, len(out))
			}
		}
	})
	b.Run("over-HTTP", func(b *testing.B) {
		c := httpClient(b, s, keys)
		req := mcp.CallToolRequest{}
		req.Params.Name = "list_file_chunks"
		req.Params.Arguments = map[string]any{"project_reference": "acme", "file_path": "big.md"}
		for b.Loop() {
			res, err := c.CallTool(context.Background(), req)
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})
}

// httpClient serves s over mcp-go's streamable HTTP transport on loopback
// and returns an initialised client with the test key.
func httpClient(b *testing.B, s *server.MCPServer, keys *auth.Keys) *client.Client {
	b.Helper()
	h := server.NewStreamableHTTPServer(s, server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
		if p, ok := auth.FromContext(r.Context()); ok {
			return auth.WithPrincipal(ctx, p)
		}
		return ctx
	}))
	srv := httptest.NewServer(keys.Middleware(h))
	b.Cleanup(srv.Close)
	c, err := client.NewStreamableHttpClient(srv.URL, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer test-key-0123456789"}))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		b.Fatal(err)
	}
	return c
}
