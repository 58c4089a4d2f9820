package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Arguments are checked against each tool's input schema here rather than
// by mcp-go (server.WithInputSchemaValidation), whose answer is the
// validator's Go values ("/chunk_id: &{Got: Want:uuid Err:...}"): an agent
// gets sentences it can act on ("chunk_id must be a UUID").

// argumentSchema is one tool's compiled input schema and its argument names.
type argumentSchema struct {
	tool   string
	schema *jsonschema.Schema
	names  []string // the schema's properties, sorted
}

// compileArguments compiles a tool's input schema; a schema that does not
// compile is a bug in schemas/, so it panics at start-up like Schema does.
func compileArguments(tool string, raw json.RawMessage) *argumentSchema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		panic(fmt.Sprintf("input schema of %s: %v", tool, err))
	}
	uncheckedDimensionEnum(tool, doc)
	url := "mem:///strata/tools/" + tool + ".input.json"
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(url, doc); err != nil {
		panic(fmt.Sprintf("input schema of %s: %v", tool, err))
	}
	sch, err := c.Compile(url)
	if err != nil {
		panic(fmt.Sprintf("input schema of %s: %v", tool, err))
	}
	var names []string
	if m, ok := doc.(map[string]any); ok {
		if props, ok := m["properties"].(map[string]any); ok {
			for name := range props {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return &argumentSchema{tool: tool, schema: sch, names: names}
}

// configuredDimensionArgs are the arguments whose published enum lists
// Veryfront's embedding dimensions while queryd accepts the dimension of
// every configured embedding model, whatever it is (384 and 256 for small
// Hugging Face models): the tool checks them against its models
// (semantic.go, modelsOfDimension) and names the available ones. The
// published schema is served unchanged; only its enum is not checked here.
var configuredDimensionArgs = map[string]string{
	"search_files":             "dimension",
	"get_file_chunk_embedding": "dimension",
}

// uncheckedDimensionEnum drops the enum of tool's configured-dimension
// argument from doc, the schema compiled for checking (its type stays).
func uncheckedDimensionEnum(tool string, doc any) {
	arg, ok := configuredDimensionArgs[tool]
	if !ok {
		return
	}
	m, _ := doc.(map[string]any)
	props, _ := m["properties"].(map[string]any)
	if prop, ok := props[arg].(map[string]any); ok {
		delete(prop, "enum")
	}
}

// checked refuses a call whose arguments the schema rejects, with sentences.
// The JSON checked here goes on with the call (in its context, for the
// arguments it encodes), which handler decodes as it is: the arguments are
// encoded once per call, not once here and again in the handler. The
// request itself is unchanged, so mcp-go's argument helpers still work.
func (a *argumentSchema) checked(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := req.GetRawArguments()
		raw, msg := a.checkJSON(args)
		if msg != "" {
			return mcp.NewToolResultError(msg), nil
		}
		return next(context.WithValue(ctx, checkedKey{}, checkedArguments{args: identity(args), json: raw}), req)
	}
}

type checkedKey struct{}

// checkedArguments are a call's arguments (by identity) and their JSON.
type checkedArguments struct {
	args uintptr
	json json.RawMessage
}

// identity tells one decoded arguments value from another without comparing
// them: the map (or pointer) it is, or 0 for anything else.
func identity(args any) uintptr {
	switch v := reflect.ValueOf(args); v.Kind() {
	case reflect.Map, reflect.Pointer:
		return uintptr(v.UnsafePointer())
	}
	return 0
}

// argumentsJSON is a call's arguments as JSON: the JSON checked encoded when
// ctx carries it for these very arguments, else encoded now.
func argumentsJSON(ctx context.Context, args any) (json.RawMessage, error) {
	if c, ok := ctx.Value(checkedKey{}).(checkedArguments); ok && c.args != 0 && c.args == identity(args) {
		return c.json, nil
	}
	if raw, ok := args.(json.RawMessage); ok {
		return raw, nil
	}
	return json.Marshal(args)
}

// check returns "" for valid arguments, else what is wrong with them.
func (a *argumentSchema) check(args any) string {
	_, msg := a.checkJSON(args)
	return msg
}

// checkJSON is check, also returning the arguments' JSON.
func (a *argumentSchema) checkJSON(args any) (json.RawMessage, string) {
	raw, err := argumentsJSON(context.Background(), args)
	if err != nil {
		return nil, fmt.Sprintf("the arguments of %s are not JSON: %v", a.tool, err)
	}
	value, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Sprintf("the arguments of %s are not JSON: %v", a.tool, err)
	}
	if value == nil { // no arguments at all: as {}
		value = map[string]any{}
	}
	if _, ok := value.(map[string]any); !ok {
		return nil, fmt.Sprintf("the arguments of %s must be an object of named arguments", a.tool)
	}
	err = a.schema.Validate(value)
	if err == nil {
		return raw, ""
	}
	verr, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return nil, fmt.Sprintf("invalid arguments for %s: %v", a.tool, err)
	}
	var sentences []string
	for _, leaf := range leaves(verr) {
		if s := a.sentence(leaf); !slices.Contains(sentences, s) {
			sentences = append(sentences, s)
		}
	}
	return nil, strings.Join(sentences, "; ")
}

func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

var english = message.NewPrinter(language.English)

// sentence says what one violation means, naming the argument.
func (a *argumentSchema) sentence(e *jsonschema.ValidationError) string {
	arg := argumentName(e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		return fmt.Sprintf("%s %s required", listOf(prefixed(arg, k.Missing), "and"), pluralVerb(len(k.Missing)))
	case *kind.AdditionalProperties:
		if arg != "" { // an object inside an argument
			return fmt.Sprintf("%s has no field %s", arg, listOf(k.Properties, "or"))
		}
		takes := "takes no arguments"
		if len(a.names) > 0 {
			takes = "it takes " + listOf(a.names, "and")
		}
		return fmt.Sprintf("%s %s not %s of %s; %s", listOf(k.Properties, "and"), pluralVerb(len(k.Properties)),
			map[bool]string{true: "an argument", false: "arguments"}[len(k.Properties) == 1], a.tool, takes)
	case *kind.Type:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = withArticle(w)
		}
		got := withArticle(k.Got)
		if k.Got == "number" && slices.Contains(k.Want, "integer") {
			got = "a number with a fraction"
		}
		return fmt.Sprintf("%s must be %s, not %s", orValue(arg), listOf(want, "or"), got)
	case *kind.Format:
		if k.Want == "uuid" {
			return fmt.Sprintf("%s must be a UUID", orValue(arg))
		}
		return fmt.Sprintf("%s must be in %s format", orValue(arg), k.Want)
	case *kind.Minimum:
		return fmt.Sprintf("%s must be at least %s", orValue(arg), k.Want.RatString())
	case *kind.Maximum:
		return fmt.Sprintf("%s must be at most %s", orValue(arg), k.Want.RatString())
	case *kind.ExclusiveMinimum:
		return fmt.Sprintf("%s must be greater than %s", orValue(arg), k.Want.RatString())
	case *kind.ExclusiveMaximum:
		return fmt.Sprintf("%s must be less than %s", orValue(arg), k.Want.RatString())
	case *kind.MultipleOf:
		return fmt.Sprintf("%s must be a multiple of %s", orValue(arg), k.Want.RatString())
	case *kind.MinLength:
		return fmt.Sprintf("%s must be at least %d characters long", orValue(arg), k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("%s must be at most %d characters long", orValue(arg), k.Want)
	case *kind.MinItems:
		return fmt.Sprintf("%s must have at least %d items", orValue(arg), k.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("%s must have at most %d items", orValue(arg), k.Want)
	case *kind.UniqueItems:
		return fmt.Sprintf("%s must not repeat an item", orValue(arg))
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			b, _ := json.Marshal(w)
			want[i] = string(b)
		}
		return fmt.Sprintf("%s must be one of %s", orValue(arg), listOf(want, "or"))
	case *kind.Const:
		b, _ := json.Marshal(k.Want)
		return fmt.Sprintf("%s must be %s", orValue(arg), b)
	case *kind.Pattern:
		return fmt.Sprintf("%s must match the pattern %s", orValue(arg), k.Want)
	}
	return fmt.Sprintf("%s: %s", orValue(arg), e.ErrorKind.LocalizedString(english))
}

// argumentName renders an instance location: "chunk_id", "ids[2]", "filter.path".
func argumentName(loc []string) string {
	var b strings.Builder
	for _, seg := range loc {
		if isIndex(seg) {
			b.WriteString("[" + seg + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func orValue(arg string) string {
	if arg == "" {
		return "the arguments"
	}
	return arg
}

func prefixed(parent string, names []string) []string {
	if parent == "" {
		return names
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = parent + "." + n
	}
	return out
}

func withArticle(jsonType string) string {
	switch jsonType {
	case "integer", "array", "object":
		return "an " + jsonType
	case "null":
		return "null"
	}
	return "a " + jsonType
}

func pluralVerb(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// listOf joins "a", "a and b", "a, b and c".
func listOf(items []string, conj string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " " + conj + " " + items[len(items)-1]
}
