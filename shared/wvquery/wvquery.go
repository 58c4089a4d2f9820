// Package wvquery holds the small helpers that every Weaviate reader and
// writer of Strata uses around the Go client: combining where filters,
// taking a GraphQL Get answer apart (its rows, its errors), and reading
// property values out of the maps the client returns (GraphQL rows, REST
// objects, and gRPC results as queryd/store/grpcsearch shapes them).
//
// Reads are lenient: a property that is missing or has another type reads
// as its zero value (an empty, non-nil slice for Strs), since an object
// written before a property existed has none.
package wvquery

import (
	"encoding/json"
	"strings"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate/entities/models"
)

// NoTenant reports whether a Weaviate error message says that the project
// has no tenant in the collection (nothing written there yet), which
// readers answer as empty; any other error says nothing about the data.
func NoTenant(msg string) bool {
	return strings.Contains(msg, "tenant not found") || strings.Contains(msg, "has multi-tenancy enabled")
}

// And combines filters with AND. One filter is returned as it is.
func And(ws ...*filters.WhereBuilder) *filters.WhereBuilder {
	if len(ws) == 1 {
		return ws[0]
	}
	return filters.Where().WithOperator(filters.And).WithOperands(ws)
}

// Rows are the rows of class in a GraphQL Get answer, each a property map
// as the client decodes it (numbers float64, "_additional" a map); none
// when the answer holds none (no data, or errors only).
func Rows(resp *models.GraphQLResponse, class string) []map[string]any {
	if resp == nil {
		return []map[string]any{}
	}
	get, _ := resp.Data["Get"].(map[string]any)
	list, _ := get[class].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, item := range list {
		if m, ok := item.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// Errors are the messages of a GraphQL answer's errors, joined with "; ";
// "" when there are none.
func Errors(errs []*models.GraphQLError) string {
	msgs := make([]string, 0, len(errs))
	for _, e := range errs {
		if e != nil {
			msgs = append(msgs, e.Message)
		}
	}
	return strings.Join(msgs, "; ")
}

// Str reads a text property.
func Str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// Float reads a number property. GraphQL and gRPC give float64, REST
// json.Number; int and int64 are what Strata itself puts in a map.
func Float(m map[string]any, key string) float64 {
	switch v := m[key].(type) {
	case float64:
		return v
	case int64:
		return float64(v)
	case int:
		return float64(v)
	case json.Number:
		f, _ := v.Float64()
		return f
	}
	return 0
}

// Int reads an int property (a number, as Float reads it, truncated).
func Int(m map[string]any, key string) int { return int(Float(m, key)) }

// Strs reads a text[] property: []any as Weaviate returns it, or []string
// as Strata itself puts in a map. The slice is never nil.
func Strs(m map[string]any, key string) []string {
	switch v := m[key].(type) {
	case []string:
		if v != nil {
			return v
		}
	case []any:
		out := make([]string, 0, len(v))
		for _, s := range v {
			if s, ok := s.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return []string{}
}
