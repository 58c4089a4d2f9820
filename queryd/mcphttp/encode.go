package mcphttp

import (
	"encoding/json"
	"math"
	"strconv"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
)

// encoder encodes answers.
type encoder struct {
	// serverInfo is the last _meta holding only the server's identity,
	// encoded: HandleMessage puts the same one in every 2026-07-28 answer.
	serverInfo atomic.Pointer[encodedInfo]
}

type encodedInfo struct {
	info mcp.Implementation
	json []byte
}

// encodeResponse is json.Marshal(resp) byte for byte. A tool call's answer
// is written without the map CallToolResult.MarshalJSON builds and sorts
// for every answer: its members are encoded one by one, in the order that
// map's keys sort in (TestEncodeResponseAsMarshal compares the two).
func encodeResponse(resp mcp.JSONRPCMessage) ([]byte, error) {
	var e encoder
	return e.encode(resp)
}

func (e *encoder) encode(resp mcp.JSONRPCMessage) ([]byte, error) {
	r, ok := resp.(mcp.JSONRPCResponse)
	if !ok {
		return json.Marshal(resp)
	}
	res, ok := r.Result.(*mcp.CallToolResult)
	if !ok || res == nil {
		return json.Marshal(resp)
	}
	b := make([]byte, 0, 256+len(res.RawStructuredContent))
	b = append(b, `{"jsonrpc":`...)
	b, err := appendJSON(b, r.JSONRPC)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"id":`...)
	if b, err = appendID(b, r.ID); err != nil {
		return nil, err
	}
	b = append(b, `,"result":{`...)
	first := true
	member := func(name string, v any) {
		if err != nil {
			return
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":`...)
		b, err = appendJSON(b, v)
	}
	// The members CallToolResult.MarshalJSON puts in its map, by name.
	if res.Meta != nil {
		if info, ok := e.metaJSON(res.Meta); ok {
			first = false
			b = append(append(b, `"_meta":`...), info...)
		} else {
			member("_meta", res.Meta)
		}
	}
	if err == nil {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, `"content":[`...)
		for i, c := range res.Content {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendContent(b, c); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	if len(res.InputRequests) > 0 {
		member("inputRequests", res.InputRequests)
	}
	if res.IsError {
		member("isError", true)
	}
	if res.RequestState != "" {
		member("requestState", res.RequestState)
	}
	if res.ResultType != "" {
		member("resultType", res.ResultType)
	}
	if len(res.RawStructuredContent) > 0 {
		member("structuredContent", json.RawMessage(res.RawStructuredContent))
	} else if res.StructuredContent != nil {
		member("structuredContent", res.StructuredContent)
	}
	if err != nil {
		return nil, err
	}
	return append(b, "}}"...), nil
}

// metaJSON is the encoding of a _meta that holds nothing but the server's
// identity (without icons), as (*mcp.Meta).MarshalJSON encodes it.
func (e *encoder) metaJSON(m *mcp.Meta) ([]byte, bool) {
	if m.ProgressToken != nil || len(m.AdditionalFields) != 1 {
		return nil, false
	}
	info, ok := m.AdditionalFields[mcp.MetaKeyServerInfo].(mcp.Implementation)
	if !ok || len(info.Icons) > 0 {
		return nil, false
	}
	if c := e.serverInfo.Load(); c != nil && c.info.Name == info.Name && c.info.Version == info.Version && c.info.Title == info.Title &&
		c.info.Description == info.Description && c.info.WebsiteURL == info.WebsiteURL {
		return c.json, true
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, false
	}
	e.serverInfo.Store(&encodedInfo{info: info, json: b})
	return b, true
}

// appendID appends a request id as json.Marshal encodes it.
func appendID(b []byte, id mcp.RequestId) ([]byte, error) {
	switch v := id.Value().(type) {
	case float64: // how encoding/json decodes a number id
		if v != 0 && v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return strconv.AppendInt(b, int64(v), 10), nil
		}
	case string:
		if plainJSONString(v) {
			return append(append(append(b, '"'), v...), '"'), nil
		}
	}
	return appendJSON(b, id)
}

// appendContent appends one content item as json.Marshal encodes it.
func appendContent(b []byte, c mcp.Content) ([]byte, error) {
	if t, ok := c.(mcp.TextContent); ok && t.Annotations == nil && t.Meta == nil && plainJSONString(t.Type) && plainJSONString(t.Text) {
		b = append(append(b, `{"type":"`...), t.Type...)
		b = append(append(b, `","text":"`...), t.Text...)
		return append(b, `"}`...), nil
	}
	return appendJSON(b, any(c))
}

// plainJSONString reports whether json.Marshal encodes s as s in quotes:
// printable ASCII with nothing it escapes.
func plainJSONString(s string) bool {
	for i := range len(s) {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

func appendJSON(b []byte, v any) ([]byte, error) {
	enc, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, enc...), nil
}
