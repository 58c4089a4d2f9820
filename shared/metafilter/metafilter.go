// Package metafilter compiles a document metadata filter (package
// metadata) into the Weaviate filter that runs it on chunks and chunk
// vectors, which both carry their document's metadata as the indexer
// writes it: text values are "key=value" tokens of the meta property
// (ContainsAny), numbers and dates compare the key's range property
// together with its "key#kind" token. queryd searches with it
// (queryd/store MetadataWhere), and the measurement programs build the same
// filter to query Weaviate directly.
package metafilter

import (
	"errors"
	"fmt"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"

	"github.com/strata-kb/strata/shared/metadata"
	"github.com/strata-kb/strata/shared/wvquery"
)

// ErrNoRanges is returned for a range on a key the index keeps no range
// property of (metadata.MaxRangeKeys).
var ErrNoRanges = errors.New("no ranges on this key")

// HasRange reports whether the searched classes have the range property
// prop (metadata.RangeProperty).
type HasRange func(prop string) (bool, error)

// Where is f as a filter on chunks and chunk vectors, every condition
// ANDed; nil for an empty filter. A number or date compares the key's range
// property: hasRange is asked whether it exists (an error wrapping
// ErrNoRanges when not); nil hasRange takes every range property to exist.
func Where(f metadata.Filter, hasRange HasRange) (*filters.WhereBuilder, error) {
	var parts []*filters.WhereBuilder
	for _, c := range f {
		w, err := condition(c, hasRange)
		if err != nil {
			return nil, err
		}
		parts = append(parts, w)
	}
	switch len(parts) {
	case 0:
		return nil, nil
	case 1:
		return parts[0], nil
	}
	return wvquery.And(parts...), nil
}

func tokens(values ...string) *filters.WhereBuilder {
	return filters.Where().WithPath([]string{metadata.TokensProperty}).WithOperator(filters.ContainsAny).WithValueText(values...)
}

func condition(c metadata.Condition, hasRange HasRange) (*filters.WhereBuilder, error) {
	var parts []*filters.WhereBuilder
	if c.Exists != nil {
		if *c.Exists {
			parts = append(parts, tokens(metadata.ExistsToken(c.Key)))
		} else {
			// NotEqual on a text[] is "holds no such value" (no token at all included).
			parts = append(parts, filters.Where().WithPath([]string{metadata.TokensProperty}).
				WithOperator(filters.NotEqual).WithValueText(metadata.ExistsToken(c.Key)))
		}
	}
	values := c.Any
	if c.Equal != nil {
		values = []metadata.Value{*c.Equal}
	}
	if len(values) > 0 {
		var texts []string
		var anyOf []*filters.WhereBuilder
		for _, v := range values {
			switch v.Kind {
			case metadata.Number, metadata.Date:
				w, err := rangeWhere(c.Key, v.Kind, filters.Equal, v, hasRange)
				if err != nil {
					return nil, err
				}
				anyOf = append(anyOf, w)
			default:
				texts = append(texts, metadata.TextToken(c.Key, v.Text))
			}
		}
		if len(texts) > 0 {
			anyOf = append(anyOf, tokens(texts...))
		}
		if len(anyOf) == 1 {
			parts = append(parts, anyOf[0])
		} else {
			parts = append(parts, filters.Where().WithOperator(filters.Or).WithOperands(anyOf))
		}
	}
	for _, b := range []*metadata.Bound{c.Lower, c.Upper} {
		if b == nil {
			continue
		}
		op := map[[2]bool]filters.WhereOperator{
			{true, true}: filters.GreaterThanEqual, {true, false}: filters.GreaterThan,
			{false, true}: filters.LessThanEqual, {false, false}: filters.LessThan,
		}[[2]bool{b == c.Lower, b.Inclusive}]
		w, err := rangeWhere(c.Key, b.Value.Kind, op, b.Value, hasRange)
		if err != nil {
			return nil, err
		}
		parts = append(parts, w)
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return wvquery.And(parts...), nil
}

// rangeWhere compares key's range property with v. The kind token goes
// with it: a property keeps a value a tag change removed (a merge cannot
// unset it), the token does not.
func rangeWhere(key string, k metadata.Kind, op filters.WhereOperator, v metadata.Value, hasRange HasRange) (*filters.WhereBuilder, error) {
	prop := metadata.RangeProperty(key, k)
	if hasRange != nil {
		ok, err := hasRange(prop)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("metadata key %q: %w: the index has no room for more %s keys", key, ErrNoRanges, k)
		}
	}
	w := filters.Where().WithPath([]string{prop}).WithOperator(op)
	if k == metadata.Date {
		w = w.WithValueDate(v.Date)
	} else {
		w = w.WithValueNumber(v.Number)
	}
	return wvquery.And(tokens(metadata.KindToken(key, k)), w), nil
}
