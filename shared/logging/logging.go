// Package logging builds the slog logger every component uses: JSON or text
// on stderr, with the component name on every line.
package logging

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
)

// New returns a logger at level ("debug", "info", "warn", "error") in format ("json" or "text").
func New(component, level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level %q: %w", level, err)
	}
	opts := &slog.HandlerOptions{Level: l}
	var h slog.Handler
	switch strings.ToLower(format) {
	case "json":
		h = slog.NewJSONHandler(os.Stderr, opts)
	case "text":
		h = slog.NewTextHandler(os.Stderr, opts)
	default:
		return nil, fmt.Errorf("log format %q: want json or text", format)
	}
	return slog.New(h).With("component", component), nil
}
