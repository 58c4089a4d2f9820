package uselite

import (
	"fmt"
	"math"
)

// dtype is the element type of a tensor. The graph only needs three: every
// integer type (int32 and int64 in the TensorFlow graph) is held as int32,
// because TF.js does the same and no value in this model exceeds 2^31.
type dtype uint8

const (
	dtFloat dtype = iota
	dtInt
	dtBool // stored in tensor.i as 0/1
)

func (d dtype) String() string {
	switch d {
	case dtFloat:
		return "float32"
	case dtInt:
		return "int32"
	case dtBool:
		return "bool"
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// tensor is a dense row-major n-d array. Exactly one of f (float) and i
// (int/bool) is used, depending on dt.
type tensor struct {
	dt    dtype
	shape []int
	f     []float32
	i     []int32
}

func numElements(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

func newFloat(shape []int) *tensor {
	return &tensor{dt: dtFloat, shape: shape, f: make([]float32, numElements(shape))}
}

func newInt(dt dtype, shape []int) *tensor {
	return &tensor{dt: dt, shape: shape, i: make([]int32, numElements(shape))}
}

func newLike(dt dtype, shape []int) *tensor {
	if dt == dtFloat {
		return newFloat(shape)
	}
	return newInt(dt, shape)
}

func (t *tensor) size() int { return numElements(t.shape) }

func (t *tensor) rank() int { return len(t.shape) }

// ints returns the tensor's values as Go ints; it is used for shape-like
// operands (axes, shapes, begin/end vectors).
func (t *tensor) ints() ([]int, error) {
	if t.dt == dtFloat {
		return nil, fmt.Errorf("expected an integer tensor, got float32 %v", t.shape)
	}
	out := make([]int, len(t.i))
	for k, v := range t.i {
		out[k] = int(v)
	}
	return out, nil
}

func (t *tensor) scalarInt() (int, error) {
	v, err := t.ints()
	if err != nil {
		return 0, err
	}
	if len(v) != 1 {
		return 0, fmt.Errorf("expected a scalar, got shape %v", t.shape)
	}
	return v[0], nil
}

// withShape returns a view of t with another shape and the same data.
func (t *tensor) withShape(shape []int) *tensor {
	return &tensor{dt: t.dt, shape: shape, f: t.f, i: t.i}
}

// get/set give dtype-independent element access for the shape-shuffling ops
// (gather, slice, transpose, concat), which are not on the hot path.
func (t *tensor) copyElem(dst *tensor, di, si int) {
	if t.dt == dtFloat {
		dst.f[di] = t.f[si]
	} else {
		dst.i[di] = t.i[si]
	}
}

func (t *tensor) asFloat64(k int) float64 {
	if t.dt == dtFloat {
		return float64(t.f[k])
	}
	return float64(t.i[k])
}

func strides(shape []int) []int {
	s := make([]int, len(shape))
	acc := 1
	for k := len(shape) - 1; k >= 0; k-- {
		s[k] = acc
		acc *= shape[k]
	}
	return s
}

func normAxis(axis, rank int) (int, error) {
	if axis < 0 {
		axis += rank
	}
	if axis < 0 || axis >= rank {
		return 0, fmt.Errorf("axis %d out of range for rank %d", axis, rank)
	}
	return axis, nil
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

// rsqrt matches TF.js: 1/sqrt computed in float32.
func rsqrt(x float32) float32 { return 1 / float32(math.Sqrt(float64(x))) }
