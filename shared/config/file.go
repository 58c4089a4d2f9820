package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"go.yaml.in/yaml/v3"
)

// fileSettings are the flag values a -config file sets, by flag name.
type fileSettings struct {
	path   string
	values map[string]fileValue
}

type fileValue struct {
	text string
	line int
}

// readFile reads a YAML mapping of flag names to values. Every key must be
// a flag of fs, so a misspelt setting is an error rather than silently unused.
// The settings returned may be nil.
func readFile(path string, fs *flag.FlagSet) (*fileSettings, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("-config (%s): %w", EnvName(configFlag), err)
	}
	defer f.Close()
	var doc yaml.Node
	if err := yaml.NewDecoder(f).Decode(&doc); errors.Is(err, io.EOF) {
		return &fileSettings{path: path}, nil // an empty file sets nothing
	} else if err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("config file %s:%d: want flag-name: value lines", path, root.Line)
	}
	s := &fileSettings{path: path, values: map[string]fileValue{}}
	var errs []error
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		name := k.Value
		where := fmt.Sprintf("config file %s:%d: %s", path, k.Line, name)
		switch _, dup := s.values[name]; {
		case k.Kind != yaml.ScalarNode:
			errs = append(errs, fmt.Errorf("config file %s:%d: keys must be flag names", path, k.Line))
		case name == configFlag || name == versionFlag:
			errs = append(errs, fmt.Errorf("%s: cannot be set in a config file", where))
		case fs.Lookup(name) == nil:
			errs = append(errs, fmt.Errorf("%s: unknown key, no such flag (-h lists them)", where))
		case dup:
			errs = append(errs, fmt.Errorf("%s: set twice", where))
		case v.Kind != yaml.ScalarNode:
			errs = append(errs, fmt.Errorf("%s: want one value, written as the flag takes it (lists as a,b), not a YAML list or map", where))
		default:
			text := v.Value
			if v.Tag == "!!null" {
				text = ""
			}
			s.values[name] = fileValue{text: text, line: v.Line}
		}
	}
	// The valid settings are kept beside the errors so that their values are
	// checked too and one run reports every mistake in the file.
	return s, errors.Join(errs...)
}

// valueHints say what flag's terse "parse error" wanted, by value type.
var valueHints = map[string]string{
	"bool":     "true or false",
	"duration": "a number with a unit, e.g. 500ms, 30s, 2m",
	"int":      "a whole number",
	"uint":     "a whole number >= 0",
	"float":    "a number",
}

// apply sets f from the file if the file has it; s may be nil (no file).
func (s *fileSettings) apply(fs *flag.FlagSet, f *flag.Flag) error {
	if s == nil {
		return nil
	}
	v, ok := s.values[f.Name]
	if !ok {
		return nil
	}
	if err := fs.Set(f.Name, v.text); err != nil {
		kind, _ := flag.UnquoteUsage(f)
		if kind == "" {
			kind = "bool" // UnquoteUsage names no type for bool flags
		}
		hint := ""
		if h, ok := valueHints[kind]; ok {
			hint = " (want " + h + ")"
		}
		return fmt.Errorf("config file %s:%d: %s: %q is not a valid %s%s: %w", s.path, v.line, f.Name, v.text, kind, hint, err)
	}
	return nil
}
