package grpcsearch

import (
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	pb "github.com/weaviate/weaviate/grpc/generated/protocol/v1"
)

// The parity with GraphQL against a real weaviate-server is tested where
// the queries are made (queryd/store TestGRPCMatchesGraphQL*); these are the
// conversions alone.

func TestFilter(t *testing.T) {
	w := filters.Where().WithOperator(filters.And).WithOperands([]*filters.WhereBuilder{
		filters.Where().WithPath([]string{"file_version_id"}).WithOperator(filters.Equal).WithValueText("v"),
		filters.Where().WithPath([]string{"valid_from"}).WithOperator(filters.LessThanEqual).WithValueInt(7),
		filters.Where().WithOperator(filters.Or).WithOperands([]*filters.WhereBuilder{
			filters.Where().WithPath([]string{"id"}).WithOperator(filters.ContainsAny).WithValueText("a", "b"),
			filters.Where().WithPath([]string{"deleted"}).WithOperator(filters.Equal).WithValueBoolean(false),
		}),
	})
	f, err := filter(w.Build())
	if err != nil {
		t.Fatal(err)
	}
	prop := func(f *pb.Filters) string { return f.GetTarget().GetProperty() }
	if f.Operator != pb.Filters_OPERATOR_AND || len(f.Filters) != 3 {
		t.Fatalf("top: %v", f)
	}
	if a := f.Filters[0]; prop(a) != "file_version_id" || a.GetValueText() != "v" || a.Operator != pb.Filters_OPERATOR_EQUAL {
		t.Errorf("equal: %v", a)
	}
	if b := f.Filters[1]; prop(b) != "valid_from" || b.GetValueInt() != 7 || b.Operator != pb.Filters_OPERATOR_LESS_THAN_EQUAL {
		t.Errorf("int: %v", b)
	}
	or := f.Filters[2]
	if or.Operator != pb.Filters_OPERATOR_OR || prop(or.Filters[0]) != "_id" ||
		!reflect.DeepEqual(or.Filters[0].GetValueTextArray().GetValues(), []string{"a", "b"}) || or.Filters[1].GetValueBoolean() {
		t.Errorf("or: %v", or)
	}
	for _, bad := range []*filters.WhereBuilder{
		filters.Where().WithPath([]string{"geo"}).WithOperator(filters.WithinGeoRange).WithValueText("x"),
		filters.Where().WithPath([]string{"a", "b"}).WithOperator(filters.Equal).WithValueText("x"),
		filters.Where().WithPath([]string{"n"}).WithOperator(filters.Equal).WithValueNumber(1.5, 2.5),
	} {
		if _, err := filter(bad.Build()); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%+v: want a refusal, got %v", bad.Build(), err)
		}
	}
	// Numbers and dates (metadata range properties) are served.
	n, err := filter(filters.Where().WithPath([]string{"n"}).WithOperator(filters.GreaterThanEqual).WithValueNumber(1.5).Build())
	if err != nil || n.GetValueNumber() != 1.5 || n.Operator != pb.Filters_OPERATOR_GREATER_THAN_EQUAL {
		t.Errorf("number: %v %v", n, err)
	}
	day := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	d, err := filter(filters.Where().WithPath([]string{"d"}).WithOperator(filters.LessThan).WithValueDate(day).Build())
	if got, _ := time.Parse(time.RFC3339Nano, d.GetValueText()); err != nil || !got.Equal(day) {
		t.Errorf("date: %v %v", d, err)
	}
}

func TestValue(t *testing.T) {
	ints := make([]byte, 16)
	binary.LittleEndian.PutUint64(ints, uint64(3))
	binary.LittleEndian.PutUint64(ints[8:], uint64(math.MaxUint64)) // -1
	nums := make([]byte, 8)
	binary.LittleEndian.PutUint64(nums, math.Float64bits(2.5))
	for _, c := range []struct {
		in   *pb.Value
		want any
	}{
		{&pb.Value{Kind: &pb.Value_TextValue{TextValue: "t"}}, "t"},
		{&pb.Value{Kind: &pb.Value_IntValue{IntValue: 42}}, 42.0},
		{&pb.Value{Kind: &pb.Value_NumberValue{NumberValue: 0.5}}, 0.5},
		{&pb.Value{Kind: &pb.Value_BoolValue{BoolValue: true}}, true},
		{&pb.Value{Kind: &pb.Value_DateValue{DateValue: "2026-11-25T10:00:00Z"}}, "2026-11-25T10:00:00Z"},
		{&pb.Value{Kind: &pb.Value_UuidValue{UuidValue: "u"}}, "u"},
		{&pb.Value{Kind: &pb.Value_NullValue{}}, nil},
		{&pb.Value{Kind: &pb.Value_ListValue{ListValue: &pb.ListValue{Kind: &pb.ListValue_TextValues{TextValues: &pb.TextValues{Values: []string{"a", "b"}}}}}}, []any{"a", "b"}},
		{&pb.Value{Kind: &pb.Value_ListValue{ListValue: &pb.ListValue{Kind: &pb.ListValue_TextValues{TextValues: &pb.TextValues{}}}}}, []any{}},
		{&pb.Value{Kind: &pb.Value_ListValue{ListValue: &pb.ListValue{Kind: &pb.ListValue_IntValues{IntValues: &pb.IntValues{Values: ints}}}}}, []any{3.0, -1.0}},
		{&pb.Value{Kind: &pb.Value_ListValue{ListValue: &pb.ListValue{Kind: &pb.ListValue_NumberValues{NumberValues: &pb.NumberValues{Values: nums}}}}}, []any{2.5}},
		{&pb.Value{Kind: &pb.Value_ObjectValue{ObjectValue: &pb.Properties{Fields: map[string]*pb.Value{
			"k": {Kind: &pb.Value_IntValue{IntValue: 1}}}}}}, map[string]any{"k": 1.0}},
	} {
		if got := value(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v: got %#v, want %#v", c.in, got, c.want)
		}
	}
}

func TestFilterNot(t *testing.T) {
	w := filters.Where().WithOperator(filters.Not).WithOperands([]*filters.WhereBuilder{
		filters.Where().WithPath([]string{"valid_to"}).WithOperator(filters.LessThanEqual).WithValueInt(9),
	})
	f, err := filter(w.Build())
	if err != nil {
		t.Fatal(err)
	}
	if f.Operator != operatorNot || len(f.Filters) != 1 || f.Filters[0].GetTarget().GetProperty() != "valid_to" ||
		f.Filters[0].GetValueInt() != 9 || f.Filters[0].Operator != pb.Filters_OPERATOR_LESS_THAN_EQUAL {
		t.Errorf("not: %v", f)
	}
}
