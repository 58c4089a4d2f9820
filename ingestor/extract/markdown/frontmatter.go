package markdown

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.abhg.dev/goldmark/frontmatter"
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

// decodeFrontMatter decodes front matter into flat string metadata. It must
// be a mapping: anything else (a YAML string, a list) is text that merely
// sits between two delimiter lines.
func decodeFrontMatter(fm *frontmatter.Data) (map[string]string, error) {
	var m map[string]any
	if err := fm.Decode(&m); err != nil {
		return nil, fmt.Errorf("decode front matter: %w", err)
	}
	out := map[string]string{}
	flatten(out, "", m)
	return out, nil
}

// flatten stores v under key: nested keys joined with dots, lists of scalars
// as one comma-separated value, other lists by index.
func flatten(out map[string]string, key string, v any) {
	sub := func(k string) string {
		if key == "" {
			return k
		}
		return key + "." + k
	}
	switch v := v.(type) {
	case nil:
	case map[string]any:
		for k, x := range v {
			flatten(out, sub(k), x)
		}
	case map[any]any: // YAML mappings with non-string keys
		for k, x := range v {
			flatten(out, sub(fmt.Sprint(k)), x)
		}
	case []map[string]any: // TOML arrays of tables
		for i, x := range v {
			flatten(out, sub(strconv.Itoa(i)), x)
		}
	case []any:
		var parts []string
		for _, x := range v {
			s, ok := scalar(x)
			if !ok {
				parts = nil
				break
			}
			parts = append(parts, s)
		}
		if len(parts) == len(v) {
			if key != "" && len(v) > 0 {
				out[key] = strings.Join(parts, ", ")
			}
			return
		}
		for i, x := range v {
			flatten(out, sub(strconv.Itoa(i)), x)
		}
	default:
		if s, ok := scalar(v); ok && key != "" {
			out[key] = s
		}
	}
}

func scalar(v any) (string, bool) {
	switch v := v.(type) {
	case map[string]any, map[any]any, []any, []map[string]any, nil:
		return "", false
	case time.Time:
		return v.Format(time.RFC3339), true
	case string:
		return v, true
	}
	return fmt.Sprint(v), true
}
