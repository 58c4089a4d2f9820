package metadata

import (
	"strings"
)

// How the index holds a document's metadata on each of its chunks, so a
// Filter runs inside Weaviate and a search's top k is filled with matching
// hits:
//
//   - TokensProperty, one exact-match text[]: "key" for every key (exists),
//     "key#number" / "key#date" / "key#text" for the kinds it holds, and
//     "key=value" for each string and list item, lower-cased (equality and
//     any-of on text fold case).
//   - one number or date property per number or date key (RangeProperty),
//     for ranges and equality. A merge patch cannot remove a property's
//     value, so a range also requires the "key#kind" token: a key removed
//     or retyped by a tag change stops matching at once.
const TokensProperty = "meta"

// MaxRangeKeys bounds the number and the date properties each (Weaviate's
// schema is shared by every project): a key beyond it keeps its value in
// the document's metadata and its exists/kind tokens, without ranges.
const MaxRangeKeys = 128

// Token spellings.
func ExistsToken(key string) string { return key }
func KindToken(key string, k Kind) string {
	return key + "#" + kindClass(k)
}
func TextToken(key, value string) string { return key + "=" + strings.ToLower(value) }

// kindClass is how a kind is matched: strings and lists as text.
func kindClass(k Kind) string {
	switch k {
	case Number:
		return "number"
	case Date:
		return "date"
	}
	return "text"
}

// Tokens is m as the index's TokensProperty values.
func Tokens(m Metadata) []string {
	out := []string{}
	for _, k := range m.Keys() {
		v := m[k]
		out = append(out, ExistsToken(k), KindToken(k, v.Kind))
		switch v.Kind {
		case String:
			out = append(out, TextToken(k, v.Text))
		case List:
			for _, item := range v.List {
				out = append(out, TextToken(k, item))
			}
		}
	}
	return out
}

// RangeProperty is the Weaviate property holding key's numbers or dates:
// "meta_n_" or "meta_d_" and the key with '_' doubled and '.' and '-'
// written as "_2e" and "_2d", so two keys never share a property.
func RangeProperty(key string, k Kind) string {
	prefix := "meta_n_"
	if k == Date {
		prefix = "meta_d_"
	}
	var b strings.Builder
	b.WriteString(prefix)
	for _, r := range key {
		switch r {
		case '_':
			b.WriteString("__")
		case '.':
			b.WriteString("_2e")
		case '-':
			b.WriteString("_2d")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// IsRangeProperty reports whether a Weaviate property name is one of RangeProperty's.
func IsRangeProperty(name string) bool {
	return strings.HasPrefix(name, "meta_n_") || strings.HasPrefix(name, "meta_d_")
}

// RangeValues is m's numbers and dates by RangeProperty, as Weaviate
// properties (dates as RFC 3339).
func RangeValues(m Metadata) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		switch v.Kind {
		case Number:
			out[RangeProperty(k, Number)] = v.Number
		case Date:
			out[RangeProperty(k, Date)] = v.Date.UTC().Format("2006-01-02T15:04:05.999999999Z07:00")
		}
	}
	return out
}
