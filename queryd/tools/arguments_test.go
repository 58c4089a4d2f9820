package tools

import (
	"context"
	"encoding/json"
	"io/fs"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestArgumentSentences: for every tool's input schema, wrong types, missing
// and unknown arguments are answered with sentences naming the argument,
// never with the validator's Go values.
func TestArgumentSentences(t *testing.T) {
	names, err := fs.Glob(schemaFS, "schemas/*.input.json")
	if err != nil || len(names) < 20 {
		t.Fatalf("input schemas: %v %v", names, err)
	}
	for _, file := range names {
		tool := strings.TrimSuffix(strings.TrimPrefix(file, "schemas/"), ".input.json")
		raw := Schema(tool + ".input.json")
		var sch struct {
			Properties           map[string]map[string]any `json:"properties"`
			Required             []string                  `json:"required"`
			AdditionalProperties *bool                     `json:"additionalProperties"`
		}
		if err := json.Unmarshal(raw, &sch); err != nil {
			t.Fatal(err)
		}
		a := compileArguments(tool, raw)
		valid := map[string]any{}
		for _, name := range sch.Required {
			valid[name] = validValue(sch.Properties[name])
		}
		if msg := a.check(valid); msg != "" {
			t.Errorf("%s: required arguments %v refused: %s", tool, valid, msg)
		}
		for _, name := range sch.Required {
			args := without(valid, name)
			expectSentence(t, tool, args, a.check(args), name+" is required")
		}
		if sch.AdditionalProperties != nil && !*sch.AdditionalProperties {
			args := with(valid, "no_such_argument", 1)
			expectSentence(t, tool, args, a.check(args), "no_such_argument is not an argument of "+tool+"; it takes ")
		}
		for name, prop := range sch.Properties {
			wrong, want := wrongValue(prop)
			if want == "" {
				continue
			}
			args := with(valid, name, wrong)
			expectSentence(t, tool, args, a.check(args), name+" must be "+want)
		}
	}
	// The issue's own examples.
	chunk := compileArguments("view_chunk_image", Schema("view_chunk_image.input.json"))
	expectSentence(t, "view_chunk_image", nil, chunk.check(map[string]any{"chunk_id": "x"}), "chunk_id must be a UUID")
	expectSentence(t, "view_chunk_image", nil, chunk.check(map[string]any{"path_part_id": "6f1c6a52-9a7e-4d43-9a0e-2f5b3f1c9d10"}),
		"path_part_id is not an argument of view_chunk_image; it takes chunk_id")
	around := compileArguments("read_around", Schema("read_around.input.json"))
	expectSentence(t, "read_around", nil, around.check(map[string]any{"chunk_id": "6f1c6a52-9a7e-4d43-9a0e-2f5b3f1c9d10", "window": 1.5}),
		"window must be an integer, not a number with a fraction")
	expectSentence(t, "read_around", nil, around.check(map[string]any{"chunk_id": "6f1c6a52-9a7e-4d43-9a0e-2f5b3f1c9d10", "window": 11}),
		"window must be at most 10")
}

func expectSentence(t *testing.T, tool string, args map[string]any, msg, want string) {
	t.Helper()
	if !strings.Contains(msg, want) {
		t.Errorf("%s %v: %q, want it to say %q", tool, args, msg, want)
	}
	for _, dump := range []string{"&{", "%!", "map[", "<nil>", "Got:", "Want:"} {
		if strings.Contains(msg, dump) {
			t.Errorf("%s %v: %q shows a Go value (%s)", tool, args, msg, dump)
		}
	}
}

// validValue is a value the property's schema accepts (for the required
// arguments around the one under test).
func validValue(prop map[string]any) any {
	if prop["format"] == "uuid" {
		return "6f1c6a52-9a7e-4d43-9a0e-2f5b3f1c9d10"
	}
	if enum, ok := prop["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	switch prop["type"] {
	case "integer", "number":
		if m, ok := prop["minimum"].(float64); ok {
			return m
		}
		return 1
	case "boolean":
		return true
	case "array":
		return []any{}
	case "object":
		return map[string]any{}
	}
	return "x"
}

// wrongValue is a value of another JSON type than the property's, and how
// the answer should name the wanted type ("" when the schema names none).
func wrongValue(prop map[string]any) (any, string) {
	switch prop["type"] {
	case "string":
		return 7, "a string, not a number"
	case "integer":
		return "seven", "an integer, not a string"
	case "number":
		return "seven", "a number, not a string"
	case "boolean":
		return "yes", "a boolean, not a string"
	case "array":
		return "x", "an array, not a string"
	case "object":
		return "x", "an object, not a string"
	}
	return nil, ""
}

func with(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{k: v}
	for key, val := range m {
		if key != k {
			out[key] = val
		}
	}
	return out
}

func without(m map[string]any, k string) map[string]any {
	out := map[string]any{}
	for key, val := range m {
		if key != k {
			out[key] = val
		}
	}
	return out
}

// TestArgumentSentencesServed: the sentences are what a tools/call answers.
func TestArgumentSentencesServed(t *testing.T) {
	s := newServer(t)
	_, errText := callTool(t, s, "*", "get_file_chunk", map[string]any{"project_reference": "acme", "chunk_id": "1 OR 1=1"})
	if errText != "chunk_id must be a UUID" {
		t.Fatalf("get_file_chunk with a bad id: %q", errText)
	}
	_, errText = callTool(t, s, "*", "list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "a.md", "drop": "table"})
	if !strings.HasPrefix(errText, "drop is not an argument of list_file_chunks; it takes ") {
		t.Fatalf("list_file_chunks with an unknown argument: %q", errText)
	}
}

// TestCheckedArgumentsEncodedOnce: a checked call's handler gets the JSON
// the check encoded, for the very arguments of its request (which stay as
// mcp-go decoded them); other arguments in the same context are encoded.
func TestCheckedArgumentsEncodedOnce(t *testing.T) {
	a := compileArguments("get_file_chunk", Schema("get_file_chunk.input.json"))
	args := map[string]any{"project_reference": "acme", "chunk_id": "6f1c6a52-9a7e-4d43-9a0e-2f5b3f1c9d10"}
	other := map[string]any{"project_reference": "beta", "chunk_id": "6f1c6a52-9a7e-4d43-9a0e-2f5b3f1c9d10"}
	var got, forOther json.RawMessage
	h := a.checked(func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if m := req.GetArguments(); m["project_reference"] != "acme" {
			t.Fatalf("the request's arguments changed: %#v", req.Params.Arguments)
		}
		var err error
		if got, err = argumentsJSON(ctx, req.GetRawArguments()); err != nil {
			t.Fatal(err)
		}
		if forOther, err = argumentsJSON(ctx, other); err != nil {
			t.Fatal(err)
		}
		return mcp.NewToolResultText("ok"), nil
	})
	req := mcp.CallToolRequest{}
	req.Params.Arguments = args
	if res, err := h(context.Background(), req); err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	want, _ := json.Marshal(args)
	wantOther, _ := json.Marshal(other)
	if string(got) != string(want) || string(forOther) != string(wantOther) {
		t.Fatalf("got %s and %s, want %s and %s", got, forOther, want, wantOther)
	}
}
