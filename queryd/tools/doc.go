package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// toolsetSystems names the system whose surface each toolset serves.
var toolsetSystems = map[string]string{
	ToolsetKnowledge: "Knowledge Stack",
	ToolsetChunks:    "Veryfront",
	ToolsetLocalRAG:  "mcp-local-rag",
	ToolsetStrata:    "Strata",
}

// Doc is the generated part of docs/tools.md: every tool of the list, by
// toolset, with its description, when it is served and its arguments as its
// input schema gives them. TestToolsDoc keeps docs/tools.md equal to it.
func Doc() string {
	var b strings.Builder
	b.WriteString("| tool | toolset | from | served |\n|---|---|---|---|\n")
	for _, d := range docOrder() {
		served := "always"
		if d.Needs != "" {
			served = "when " + d.Needs
		}
		fmt.Fprintf(&b, "| [`%s`](#%s) | `%s` | %s | %s |\n", d.Name, d.Name, d.Toolset, toolsetSystems[d.Toolset], cell(served))
	}
	for _, d := range docOrder() {
		fmt.Fprintf(&b, "\n### %s\n\n", d.Name)
		fmt.Fprintf(&b, "Toolset `%s` (%s)", d.Toolset, toolsetSystems[d.Toolset])
		if d.Needs != "" {
			fmt.Fprintf(&b, "; served when %s", d.Needs)
		}
		b.WriteString(". Defined in `queryd/tools/tool_" + d.Name + ".go`.\n\n")
		b.WriteString(text(d.Description) + "\n\n")
		args := schemaArguments(d.Input)
		if len(args) == 0 {
			b.WriteString("No arguments.\n")
			continue
		}
		b.WriteString("| argument | type | required | default | allowed | description |\n|---|---|---|---|---|---|\n")
		for _, a := range args {
			req := ""
			if a.required {
				req = "yes"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", a.name, cell(a.typ), req, cell(a.def), cell(a.allowed), cell(a.description))
		}
	}
	return b.String()
}

// docOrder is the tools by toolset (AllToolsets' order), each toolset's in
// the list's order.
func docOrder() []Tool {
	out := Definitions()
	slices.SortStableFunc(out, func(x, y Tool) int {
		return slices.Index(AllToolsets, x.Toolset) - slices.Index(AllToolsets, y.Toolset)
	})
	return out
}

// cell makes s fit a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(text(s), "|", `\|`)
}

// text is s as Markdown shows it: "<project>" is not an HTML tag.
func text(s string) string { return strings.ReplaceAll(s, "<", "&lt;") }

// argument is one property of an input schema, as the doc shows it.
type argument struct {
	name, typ, def, allowed, description string
	required                             bool
}

// propertySchema is the part of a property's JSON schema the doc shows.
type propertySchema struct {
	Type        any               `json:"type"`
	Format      string            `json:"format"`
	Description string            `json:"description"`
	Default     *json.RawMessage  `json:"default"`
	Enum        []json.RawMessage `json:"enum"`
	Minimum     *float64          `json:"minimum"`
	Maximum     *float64          `json:"maximum"`
	MinLength   *int              `json:"minLength"`
	Items       *propertySchema   `json:"items"`
	AnyOf       []propertySchema  `json:"anyOf"`
	OneOf       []propertySchema  `json:"oneOf"`
}

// schemaArguments reads an input schema's properties in their order.
func schemaArguments(schema string) []argument {
	var top struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal([]byte(schema), &top); err != nil {
		panic(fmt.Sprintf("input schema: %v", err))
	}
	if len(top.Properties) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(top.Properties))
	if _, err := dec.Token(); err != nil { // {
		panic(fmt.Sprintf("input schema properties: %v", err))
	}
	var out []argument
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			panic(fmt.Sprintf("input schema properties: %v", err))
		}
		name, _ := tok.(string)
		var p propertySchema
		if err := dec.Decode(&p); err != nil {
			panic(fmt.Sprintf("input schema property %s: %v", name, err))
		}
		a := argument{name: name, typ: p.typeName(), description: p.Description, required: slices.Contains(top.Required, name)}
		if p.Default != nil {
			a.def = "`" + string(*p.Default) + "`"
		}
		a.allowed = p.allowed()
		out = append(out, a)
	}
	return out
}

// typeName is "string", "integer or null", "array of string (uuid)".
func (p propertySchema) typeName() string {
	var alts []string
	switch t := p.Type.(type) {
	case string:
		alts = append(alts, t)
	case []any:
		for _, x := range t {
			alts = append(alts, fmt.Sprint(x))
		}
	}
	for i, a := range alts {
		switch {
		case a == "array" && p.Items != nil:
			alts[i] = "array of " + p.Items.typeName()
		case a == "string" && p.Format != "":
			alts[i] = "string (" + p.Format + ")"
		}
	}
	for _, alt := range append(slices.Clone(p.AnyOf), p.OneOf...) {
		alts = append(alts, alt.typeName())
	}
	return strings.Join(alts, " or ")
}

// allowed is the property's range, length or values: "1 to 20", `"a", "b"`.
func (p propertySchema) allowed() string {
	var parts []string
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	switch {
	case p.Minimum != nil && p.Maximum != nil:
		parts = append(parts, num(*p.Minimum)+" to "+num(*p.Maximum))
	case p.Minimum != nil:
		parts = append(parts, "at least "+num(*p.Minimum))
	case p.Maximum != nil:
		parts = append(parts, "at most "+num(*p.Maximum))
	}
	if p.MinLength != nil {
		parts = append(parts, fmt.Sprintf("at least %d character%s", *p.MinLength, map[bool]string{true: "", false: "s"}[*p.MinLength == 1]))
	}
	if len(p.Enum) > 0 {
		vals := make([]string, len(p.Enum))
		for i, v := range p.Enum {
			vals[i] = "`" + string(v) + "`"
		}
		parts = append(parts, strings.Join(vals, ", "))
	}
	for _, alt := range append(slices.Clone(p.AnyOf), p.OneOf...) {
		if s := alt.allowed(); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "; ")
}
