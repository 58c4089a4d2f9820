package metadata

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Filter is a metadata filter: every condition must hold (AND across keys).
type Filter []Condition

// Condition is what one key must satisfy. Exactly the set fields apply.
type Condition struct {
	Key    string
	Equal  *Value  // a plain value: equality (contains, for a list)
	Any    []Value // {"any": [...]}: equal to one of them
	Lower  *Bound  // {"gte"|"gt": v}
	Upper  *Bound  // {"lte"|"lt": v}
	Exists *bool   // {"exists": true|false}
}

// Bound is one end of a range, a number or a date.
type Bound struct {
	Value     Value
	Inclusive bool
}

// MaxFilterKeys and MaxAnyValues bound a filter's size.
const (
	MaxFilterKeys = 16
	MaxAnyValues  = 100
)

// Operators lists the operators a condition object takes.
const Operators = "any, gte, gt, lte, lt, exists"

// ParseFilter reads a filter from its JSON form: {"key": value | {op: ...}}.
// Errors name the key and the operator.
func ParseFilter(raw json.RawMessage) (Filter, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("metadata must be an object of keys and values, such as {\"department\": \"legal\"}")
	}
	if len(obj) > MaxFilterKeys {
		return nil, fmt.Errorf("metadata filter takes at most %d keys", MaxFilterKeys)
	}
	var f Filter
	for rawKey, v := range obj {
		key, err := NormalizeKey(rawKey)
		if err != nil {
			return nil, fmt.Errorf("metadata filter: %w", err)
		}
		c, err := parseCondition(key, v)
		if err != nil {
			return nil, err
		}
		f = append(f, c)
	}
	sort.Slice(f, func(i, j int) bool { return f[i].Key < f[j].Key })
	for i := 1; i < len(f); i++ {
		if f[i].Key == f[i-1].Key {
			return nil, fmt.Errorf("metadata filter: key %q is given twice (keys are case-insensitive)", f[i].Key)
		}
	}
	return f, nil
}

func parseCondition(key string, raw json.RawMessage) (Condition, error) {
	c := Condition{Key: key}
	var x any
	if err := json.Unmarshal(raw, &x); err != nil {
		return c, fmt.Errorf("metadata filter: key %q: %v", key, err)
	}
	switch x := x.(type) {
	case map[string]any:
		if len(x) == 0 {
			return c, fmt.Errorf("metadata filter: key %q: an empty object; use one of %s", key, Operators)
		}
		ops := make([]string, 0, len(x))
		for op := range x {
			ops = append(ops, op)
		}
		sort.Strings(ops)
		for _, op := range ops {
			if err := c.setOperator(op, x[op]); err != nil {
				return c, fmt.Errorf("metadata filter: key %q: %s: %w", key, op, err)
			}
		}
		return c, c.checkRange()
	case []any:
		return c, fmt.Errorf("metadata filter: key %q: a list is not a value; use {\"any\": [...]} for any of several values", key)
	case nil:
		return c, fmt.Errorf("metadata filter: key %q: null is not a value; use {\"exists\": false}", key)
	default:
		v, err := scalar(x)
		if err != nil {
			return c, fmt.Errorf("metadata filter: key %q: %w", key, err)
		}
		c.Equal = &v
		return c, nil
	}
}

// scalar is a filter value: a string (a date when it reads as one), a
// number or a boolean (matched as the text "true"/"false").
func scalar(x any) (Value, error) {
	switch x.(type) {
	case string, float64, bool:
		v, err := FromAny(x)
		if err == nil {
			err = v.check()
		}
		return v, err
	}
	return Value{}, fmt.Errorf("a value is a string, a number or a date, not %s", jsonKind(x))
}

func (c *Condition) setOperator(op string, x any) error {
	switch op {
	case "any":
		list, ok := x.([]any)
		if !ok || len(list) == 0 || len(list) > MaxAnyValues {
			return fmt.Errorf("takes a list of 1 to %d values", MaxAnyValues)
		}
		for _, item := range list {
			v, err := scalar(item)
			if err != nil {
				return err
			}
			c.Any = append(c.Any, v)
		}
	case "gte", "gt", "lte", "lt":
		v, err := rangeValue(x)
		if err != nil {
			return err
		}
		b := &Bound{Value: v, Inclusive: strings.HasSuffix(op, "e")}
		if op[0] == 'g' {
			if c.Lower != nil {
				return fmt.Errorf("combine one of gte/gt with one of lte/lt")
			}
			c.Lower = b
		} else {
			if c.Upper != nil {
				return fmt.Errorf("combine one of gte/gt with one of lte/lt")
			}
			c.Upper = b
		}
	case "exists":
		b, ok := x.(bool)
		if !ok {
			return fmt.Errorf("takes true or false, not %s", jsonKind(x))
		}
		c.Exists = &b
	default:
		return fmt.Errorf("unknown operator (use %s)", Operators)
	}
	return nil
}

// rangeValue is a range bound: a number, or a string that is an RFC 3339
// time or a YYYY-MM-DD date.
func rangeValue(x any) (Value, error) {
	switch x := x.(type) {
	case float64:
		return FromAny(x)
	case string:
		if t, ok := ParseDate(x); ok {
			return Value{Kind: Date, Text: x, Date: t}, nil
		}
		return Value{}, fmt.Errorf("takes a number or a date (RFC 3339 or YYYY-MM-DD), not the string %q", clip(x))
	}
	return Value{}, fmt.Errorf("takes a number or a date (RFC 3339 or YYYY-MM-DD), not %s", jsonKind(x))
}

func (c *Condition) checkRange() error {
	if c.Exists != nil && !*c.Exists && (c.Equal != nil || c.Any != nil || c.Lower != nil || c.Upper != nil) {
		return fmt.Errorf("metadata filter: key %q: exists false cannot combine with other operators", c.Key)
	}
	if c.Lower != nil && c.Upper != nil && c.Lower.Value.Kind != c.Upper.Value.Kind {
		return fmt.Errorf("metadata filter: key %q: a range's ends must both be numbers or both dates", c.Key)
	}
	return nil
}

// RangeKind is the kind of c's range (Number or Date), 0 without one.
func (c Condition) RangeKind() Kind {
	switch {
	case c.Lower != nil:
		return c.Lower.Value.Kind
	case c.Upper != nil:
		return c.Upper.Value.Kind
	}
	return 0
}

func jsonKind(x any) string {
	switch x.(type) {
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", x)
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// Kinds is the set of kinds a key holds across documents (bit per Kind).
type Kinds uint8

// Add adds k (a list counts as a string: both match as text).
func (ks Kinds) Add(k Kind) Kinds {
	if k == List {
		k = String
	}
	return ks | 1<<k
}

// Has reports whether ks holds k.
func (ks Kinds) Has(k Kind) bool {
	if k == List {
		k = String
	}
	return ks&(1<<k) != 0
}

func (ks Kinds) String() string {
	var names []string
	for _, k := range []Kind{String, Number, Date} {
		if ks.Has(k) {
			names = append(names, k.String()+"s")
		}
	}
	return strings.Join(names, " and ")
}

// Check judges f against the keys the caller may see (the kinds each
// holds across the documents the caller can read): an unknown key, or a
// value no document's key could equal because of its type, is an error.
func (f Filter) Check(known map[string]Kinds) error {
	for _, c := range f {
		ks, ok := known[c.Key]
		if !ok {
			return fmt.Errorf("metadata filter: unknown key %q: no document you can read has it", c.Key)
		}
		values := c.Any
		if c.Equal != nil {
			values = append(values, *c.Equal)
		}
		for _, v := range values {
			if !ks.Has(v.Kind) {
				return fmt.Errorf("metadata filter: key %q holds %s, not %ss (%s)", c.Key, ks, v.Kind, valueOp(c))
			}
		}
		if k := c.RangeKind(); k != 0 && !ks.Has(k) {
			return fmt.Errorf("metadata filter: key %q holds %s: a range with %ss does not apply", c.Key, ks, k)
		}
	}
	return nil
}

func valueOp(c Condition) string {
	if c.Equal != nil {
		return "equality"
	}
	return "any"
}

// Match evaluates f on one document's metadata, as the index does.
func (f Filter) Match(m Metadata) bool {
	for _, c := range f {
		if !c.match(m) {
			return false
		}
	}
	return true
}

func (c Condition) match(m Metadata) bool {
	v, ok := m[c.Key]
	if c.Exists != nil && *c.Exists != ok {
		return false
	}
	if c.Equal == nil && c.Any == nil && c.Lower == nil && c.Upper == nil {
		return true
	}
	if !ok {
		return false
	}
	if c.Equal != nil && !equal(v, *c.Equal) {
		return false
	}
	if c.Any != nil && !slices.ContainsFunc(c.Any, func(w Value) bool { return equal(v, w) }) {
		return false
	}
	if c.Lower != nil && !c.Lower.below(v) {
		return false
	}
	if c.Upper != nil && !c.Upper.above(v) {
		return false
	}
	return true
}

// equal is whether a stored value matches a filter value: text folds case
// and a list matches when one item does; numbers and dates are exact.
func equal(stored, want Value) bool {
	switch {
	case want.Kind == String && stored.Kind == String:
		return strings.EqualFold(stored.Text, want.Text)
	case want.Kind == String && stored.Kind == List:
		return slices.ContainsFunc(stored.List, func(item string) bool { return strings.EqualFold(item, want.Text) })
	case want.Kind == Number && stored.Kind == Number:
		return stored.Number == want.Number
	case want.Kind == Date && stored.Kind == Date:
		return stored.Date.Equal(want.Date)
	}
	return false
}

// below: the bound is at or below v (v is in range from this end).
func (b Bound) below(v Value) bool {
	c, ok := compare(v, b.Value)
	return ok && (c > 0 || (c == 0 && b.Inclusive))
}

func (b Bound) above(v Value) bool {
	c, ok := compare(v, b.Value)
	return ok && (c < 0 || (c == 0 && b.Inclusive))
}

func compare(v, w Value) (int, bool) {
	switch {
	case v.Kind == Number && w.Kind == Number:
		switch {
		case v.Number < w.Number:
			return -1, true
		case v.Number > w.Number:
			return 1, true
		}
		return 0, true
	case v.Kind == Date && w.Kind == Date:
		return v.Date.Compare(w.Date), true
	}
	return 0, false
}
