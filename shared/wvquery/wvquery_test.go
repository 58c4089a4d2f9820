package wvquery

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate/entities/models"
)

func eq(path, v string) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{path}).WithOperator(filters.Equal).WithValueText(v)
}

// TestAnd: one filter is itself; several are the operands of one And.
func TestAnd(t *testing.T) {
	a, b := eq("a", "1"), eq("b", "2")
	if got := And(a); got != a {
		t.Errorf("And(a) = %v, want a itself", got.Build())
	}
	got := And(a, b).Build()
	if got.Operator != string(filters.And) || len(got.Operands) != 2 ||
		!reflect.DeepEqual(got.Operands[0], a.Build()) || !reflect.DeepEqual(got.Operands[1], b.Build()) {
		t.Errorf("And(a, b) = %+v", got)
	}
}

// TestReads: each reader takes the types the client and Strata put in a
// map and reads anything else, or nothing, as its zero value.
func TestReads(t *testing.T) {
	m := map[string]any{
		"text": "hello", "float": 2.5, "int64": int64(7), "int": 3, "number": json.Number("4.75"), "bad_number": json.Number("x"),
		"list": []any{"a", 1, "b"}, "strings": []string{"x", "y"}, "nil_strings": []string(nil), "empty": []any{},
	}
	strCases := map[string]string{"text": "hello", "float": "", "missing": ""}
	for k, want := range strCases {
		if got := Str(m, k); got != want {
			t.Errorf("Str(%s) = %q, want %q", k, got, want)
		}
	}
	floatCases := map[string]float64{"float": 2.5, "int64": 7, "int": 3, "number": 4.75, "bad_number": 0, "text": 0, "missing": 0}
	for k, want := range floatCases {
		if got := Float(m, k); got != want {
			t.Errorf("Float(%s) = %v, want %v", k, got, want)
		}
	}
	intCases := map[string]int{"float": 2, "int64": 7, "int": 3, "number": 4, "text": 0, "missing": 0}
	for k, want := range intCases {
		if got := Int(m, k); got != want {
			t.Errorf("Int(%s) = %v, want %v", k, got, want)
		}
	}
	strsCases := map[string][]string{"list": {"a", "b"}, "strings": {"x", "y"}, "nil_strings": {}, "empty": {}, "text": {}, "missing": {}}
	for k, want := range strsCases {
		got := Strs(m, k)
		if got == nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Strs(%s) = %#v, want %#v", k, got, want)
		}
	}
	if Str(nil, "k") != "" || Float(nil, "k") != 0 || Int(nil, "k") != 0 || Strs(nil, "k") == nil {
		t.Error("a nil map does not read as zero values")
	}
}

func TestNoTenant(t *testing.T) {
	for msg, want := range map[string]bool{
		`explorer: get class: vector search: object vector search at index chunk: tenant not found: "acme"`: true,
		`class Chunk has multi-tenancy enabled, but request was without tenant`:                             true,
		`cannot achieve consistency level "QUORUM": read error`:                                             false,
		`context canceled`: false,
		``:                 false,
	} {
		if got := NoTenant(msg); got != want {
			t.Errorf("NoTenant(%q) = %v, want %v", msg, got, want)
		}
	}
}

// TestRows: a Get answer's rows of the class asked, as maps; anything else
// (another class, no data, a row that is not an object) is no row.
func TestRows(t *testing.T) {
	var resp models.GraphQLResponse
	if err := json.Unmarshal([]byte(`{"data": {"Get": {"Chunk": [{"index": 1, "_additional": {"id": "a"}}, 7, {"index": 2}], "Section": [{}]}}}`), &resp); err != nil {
		t.Fatal(err)
	}
	rows := Rows(&resp, "Chunk")
	if len(rows) != 2 || Int(rows[0], "index") != 1 || Int(rows[1], "index") != 2 {
		t.Fatalf("rows %v", rows)
	}
	if add, _ := rows[0]["_additional"].(map[string]any); Str(add, "id") != "a" {
		t.Errorf("_additional %v", rows[0]["_additional"])
	}
	for name, r := range map[string]*models.GraphQLResponse{"other class": &resp, "no data": {}, "nil": nil,
		"errors only": {Errors: []*models.GraphQLError{{Message: "x"}}}} {
		if got := Rows(r, "Document"); got == nil || len(got) != 0 {
			t.Errorf("%s: %v, want no rows", name, got)
		}
	}
}

func TestErrors(t *testing.T) {
	if got := Errors(nil); got != "" {
		t.Errorf("no errors: %q", got)
	}
	if got := Errors([]*models.GraphQLError{{Message: "tenant not found"}, nil, {Message: "timeout"}}); got != "tenant not found; timeout" {
		t.Errorf("errors: %q", got)
	}
}
