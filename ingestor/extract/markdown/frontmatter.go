package markdown

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.abhg.dev/goldmark/frontmatter"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/shared/metadata"
)

// frontMatterEnd returns the end of the closing delimiter line (without its
// newline) when text opens with a front matter delimiter line (three or more
// of - or +, as the extension reads it) that an identical later line closes;
// -1 otherwise.
func frontMatterEnd(text string) int {
	first, rest, ok := strings.Cut(text, "\n")
	delim := strings.TrimSuffix(first, "\r")
	if !ok || len(delim) < 3 || (delim[0] != '-' && delim[0] != '+') || strings.Trim(delim, delim[:1]) != "" {
		return -1
	}
	off := len(first) + 1
	for rest != "" {
		line, r, _ := strings.Cut(rest, "\n")
		if strings.TrimSuffix(line, "\r") == delim {
			return off + len(strings.TrimSuffix(line, "\r"))
		}
		off += len(line) + 1
		rest = r
	}
	return -1
}

// maxFrontMatterKeys bounds the keys kept from one front matter: four
// times what a document keeps (metadata.MaxKeys), so the merge still says
// which it dropped, without a hostile file's thousands.
const maxFrontMatterKeys = 4 * metadata.MaxKeys

// decodeFrontMatter decodes front matter into typed metadata (see flatten),
// with a warning for each value it left out. It must be a mapping: anything
// else (a YAML string, a list) is text that merely sits between two
// delimiter lines, and an error.
func decodeFrontMatter(fm *frontmatter.Data) (metadata.Metadata, []string, error) {
	var m map[string]any
	if err := fm.Decode(&m); err != nil {
		return nil, nil, fmt.Errorf("decode front matter: %w", err)
	}
	f := flattener{out: metadata.Metadata{}}
	f.flatten("", m)
	if f.over > 0 {
		f.warn("front matter has %d keys more than the %d read; they are left out", f.over, maxFrontMatterKeys)
	}
	return f.out, f.warnings, nil
}

type flattener struct {
	out      metadata.Metadata
	warnings []string
	over     int // keys beyond maxFrontMatterKeys
}

func (f *flattener) warn(format string, args ...any) {
	// One line: callers join warnings with "; ".
	f.warnings = append(f.warnings, strings.Join(strings.Fields(fmt.Sprintf(format, args...)), " "))
}

// flatten stores v under key, lower-cased, typed by metadata.FromAny:
// nested keys joined with dots, a number a number, a date (YAML and TOML
// timestamps, or a string that reads as one) a date, a list of scalars a
// list of strings, other lists (of tables, of lists) by index, true and
// false strings. A null or an empty list is no value. Of keys that differ
// only in case the first in order is kept; a value that cannot be typed
// (a number that is not finite) is left out; each with a warning.
func (f *flattener) flatten(key string, v any) {
	sub := func(k string) string {
		k = strings.ToLower(k)
		if key == "" {
			return k
		}
		return key + "." + k
	}
	switch v := v.(type) {
	case nil:
	case map[string]any:
		for _, k := range sortedKeys(v) {
			f.flatten(sub(k), v[k])
		}
	case map[any]any: // YAML mappings with non-string keys
		keys := make(map[string]any, len(v))
		for k, x := range v {
			keys[fmt.Sprint(k)] = x
		}
		for _, k := range sortedKeys(keys) {
			f.flatten(sub(k), keys[k])
		}
	case []map[string]any: // TOML arrays of tables
		for i, x := range v {
			f.flatten(sub(strconv.Itoa(i)), x)
		}
	case []any:
		if len(v) == 0 {
			return
		}
		if !slices.ContainsFunc(v, isNested) {
			f.set(key, v)
			return
		}
		for i, x := range v {
			f.flatten(sub(strconv.Itoa(i)), x)
		}
	default:
		f.set(key, v)
	}
}

// set types v and stores it under key.
func (f *flattener) set(key string, v any) {
	if key == "" {
		return
	}
	if _, dup := f.out[key]; dup {
		f.warn("front matter key %q appears twice (in different cases, or dotted and nested); the first is kept", key)
		return
	}
	if len(f.out) >= maxFrontMatterKeys {
		f.over++
		return
	}
	val, err := metadata.FromAny(v)
	if err != nil {
		f.warn("front matter key %q left out: %v", key, err)
		return
	}
	f.out[key] = extract.BoundValue(val)
}

// isNested reports whether a list item is a mapping or a list, which a
// list of strings cannot hold.
func isNested(v any) bool {
	switch v.(type) {
	case map[string]any, map[any]any, []any, []map[string]any:
		return true
	}
	return false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
