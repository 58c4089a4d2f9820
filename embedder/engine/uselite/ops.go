package uselite

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// opCtx gives an op access to its node's attributes and the graph's
// load-time preparations (pre-transposed weights).
type opCtx struct {
	g    *graph
	node *graphNode
	id   int
}

func (c *opCtx) attrInt(name string, def int) (int, error) {
	a, ok := c.node.attr[name]
	if !ok || len(a.I) == 0 {
		return def, nil
	}
	return a.int()
}

func (c *opCtx) attrBool(name string) bool {
	a, ok := c.node.attr[name]
	return ok && a.B != nil && *a.B
}

type opFunc func(c *opCtx, in []*tensor) ([]*tensor, error)

// opTable implements the TensorFlow ops this model uses, with TF semantics
// (which TF.js follows). Ops the model does not use are rejected at load.
var opTable map[string]opFunc

func init() {
	opTable = map[string]opFunc{
		"Identity":      func(c *opCtx, in []*tensor) ([]*tensor, error) { return one(in[0], nil) },
		"Shape":         opShape,
		"StridedSlice":  opStridedSlice,
		"Slice":         opSlice,
		"Reshape":       opReshape,
		"ExpandDims":    opExpandDims,
		"Squeeze":       opSqueeze,
		"Transpose":     opTranspose,
		"ConcatV2":      opConcat,
		"Pack":          opPack,
		"SplitV":        opSplitV,
		"GatherV2":      opGatherV2,
		"GatherNd":      opGatherNd,
		"ScatterNd":     opScatterNd,
		"SparseToDense": opSparseToDense,
		"Where":         opWhere,
		"Range":         opRange,
		"Cast":          opCast,
		"Max":           reduceOp(reduceMax),
		"Sum":           reduceOp(reduceSum),
		"Mean":          reduceOp(reduceMean),
		"Prod":          reduceOp(reduceProd),
		"Add":           binaryOp(kindAdd, func(a, b float32) float32 { return a + b }, func(a, b int32) int32 { return a + b }),
		"AddV2":         binaryOp(kindAdd, func(a, b float32) float32 { return a + b }, func(a, b int32) int32 { return a + b }),
		"Sub":           binaryOp(kindSub, func(a, b float32) float32 { return a - b }, func(a, b int32) int32 { return a - b }),
		"Mul":           binaryOp(kindMul, func(a, b float32) float32 { return a * b }, func(a, b int32) int32 { return a * b }),
		"RealDiv":       binaryOp(kindOther, func(a, b float32) float32 { return a / b }, nil),
		"Maximum":       binaryOp(kindOther, func(a, b float32) float32 { return max(a, b) }, func(a, b int32) int32 { return max(a, b) }),
		"Less":          compareOp(func(a, b float64) bool { return a < b }),
		"Greater":       compareOp(func(a, b float64) bool { return a > b }),
		"LogicalNot":    opLogicalNot,
		"Square":        unaryOp(func(x float32) float32 { return x * x }),
		"Rsqrt":         unaryOp(rsqrt),
		"Relu":          unaryOp(func(x float32) float32 { return max(x, 0) }),
		"Tanh":          unaryOp(func(x float32) float32 { return float32(math.Tanh(float64(x))) }),
		"Sin":           unaryOp(func(x float32) float32 { return float32(math.Sin(float64(x))) }),
		"Cos":           unaryOp(func(x float32) float32 { return float32(math.Cos(float64(x))) }),
		"Softmax":       opSoftmax,
		"BiasAdd":       opBiasAdd,
		"MatMul":        opMatMul,
		"BatchMatMul":   opBatchMatMul,
		"BatchMatMulV2": opBatchMatMul,
		"Conv2D":        opConv2D,
	}
}

func one(t *tensor, err error) ([]*tensor, error) {
	if err != nil {
		return nil, err
	}
	return []*tensor{t}, nil
}

func wantInputs(in []*tensor, n int) error {
	if len(in) < n {
		return fmt.Errorf("expected %d inputs, got %d", n, len(in))
	}
	return nil
}

func opShape(c *opCtx, in []*tensor) ([]*tensor, error) {
	if err := wantInputs(in, 1); err != nil {
		return nil, err
	}
	t := newInt(dtInt, []int{in[0].rank()})
	for k, d := range in[0].shape {
		t.i[k] = int32(d)
	}
	return one(t, nil)
}

// sliceSpec describes a strided selection along each input dimension.
type sliceSpec struct {
	start, step, count []int
	outShape           []int // after shrinking
}

// gatherSlice copies the elements selected by spec into a new tensor.
func gatherSlice(x *tensor, spec sliceSpec) *tensor {
	fullShape := spec.count
	out := newLike(x.dt, spec.outShape)
	n := numElements(fullShape)
	if n == 0 {
		return out
	}
	xs := strides(x.shape)
	r := len(fullShape)
	idx := make([]int, r)
	src := 0
	for d := 0; d < r; d++ {
		src += spec.start[d] * xs[d]
	}
	for o := 0; o < n; o++ {
		x.copyElem(out, o, src)
		// Advance the multi-index (last dimension fastest).
		for d := r - 1; d >= 0; d-- {
			idx[d]++
			src += spec.step[d] * xs[d]
			if idx[d] < fullShape[d] {
				break
			}
			src -= idx[d] * spec.step[d] * xs[d]
			idx[d] = 0
		}
	}
	return out
}

func opStridedSlice(c *opCtx, in []*tensor) ([]*tensor, error) {
	if err := wantInputs(in, 4); err != nil {
		return nil, err
	}
	x := in[0]
	begin, err := in[1].ints()
	if err != nil {
		return nil, err
	}
	end, err := in[2].ints()
	if err != nil {
		return nil, err
	}
	stride, err := in[3].ints()
	if err != nil {
		return nil, err
	}
	beginMask, _ := c.attrInt("begin_mask", 0)
	endMask, _ := c.attrInt("end_mask", 0)
	shrinkMask, _ := c.attrInt("shrink_axis_mask", 0)
	ellipsisMask, _ := c.attrInt("ellipsis_mask", 0)
	newAxisMask, _ := c.attrInt("new_axis_mask", 0)
	if ellipsisMask != 0 || newAxisMask != 0 {
		return nil, errors.New("ellipsis_mask and new_axis_mask are not supported")
	}
	if len(begin) != len(end) || len(begin) != len(stride) || len(begin) > x.rank() {
		return nil, fmt.Errorf("begin/end/strides lengths %d/%d/%d do not fit rank %d", len(begin), len(end), len(stride), x.rank())
	}
	r := x.rank()
	spec := sliceSpec{start: make([]int, r), step: make([]int, r), count: make([]int, r)}
	for d := 0; d < r; d++ {
		dim := x.shape[d]
		if d >= len(begin) {
			spec.start[d], spec.step[d], spec.count[d] = 0, 1, dim
			spec.outShape = append(spec.outShape, dim)
			continue
		}
		s := stride[d]
		if s == 0 {
			return nil, errors.New("stride 0")
		}
		bit := 1 << d
		b, e := begin[d], end[d]
		if shrinkMask&bit != 0 {
			if b < 0 {
				b += dim
			}
			if b < 0 || b >= dim {
				return nil, fmt.Errorf("index %d out of range for dimension %d of size %d", begin[d], d, dim)
			}
			spec.start[d], spec.step[d], spec.count[d] = b, 1, 1
			continue
		}
		lo, hi := 0, dim // valid clamp range for positive strides
		if s < 0 {
			lo, hi = -1, dim-1
		}
		if beginMask&bit != 0 {
			if s > 0 {
				b = 0
			} else {
				b = dim - 1
			}
		} else {
			if b < 0 {
				b += dim
			}
			b = min(max(b, lo), hi)
		}
		if endMask&bit != 0 {
			if s > 0 {
				e = dim
			} else {
				e = -1
			}
		} else {
			if e < 0 {
				e += dim
			}
			e = min(max(e, lo), hi)
		}
		count := 0
		if s > 0 && e > b {
			count = (e - b + s - 1) / s
		} else if s < 0 && e < b {
			count = (b - e - s - 1) / -s
		}
		spec.start[d], spec.step[d], spec.count[d] = b, s, count
		spec.outShape = append(spec.outShape, count)
	}
	if spec.outShape == nil {
		spec.outShape = []int{}
	}
	return one(gatherSlice(x, spec), nil)
}

func opSlice(c *opCtx, in []*tensor) ([]*tensor, error) {
	if err := wantInputs(in, 3); err != nil {
		return nil, err
	}
	x := in[0]
	begin, err := in[1].ints()
	if err != nil {
		return nil, err
	}
	size, err := in[2].ints()
	if err != nil {
		return nil, err
	}
	if len(begin) != x.rank() || len(size) != x.rank() {
		return nil, fmt.Errorf("begin %v / size %v do not match rank %d", begin, size, x.rank())
	}
	spec := sliceSpec{start: begin, step: make([]int, x.rank()), count: make([]int, x.rank())}
	for d := range begin {
		n := size[d]
		if n < 0 {
			n = x.shape[d] - begin[d]
		}
		if begin[d] < 0 || begin[d]+n > x.shape[d] {
			return nil, fmt.Errorf("slice [%d:+%d] out of range for dimension of size %d", begin[d], n, x.shape[d])
		}
		spec.step[d], spec.count[d] = 1, n
	}
	spec.outShape = spec.count
	return one(gatherSlice(x, spec), nil)
}

func opReshape(c *opCtx, in []*tensor) ([]*tensor, error) {
	if err := wantInputs(in, 2); err != nil {
		return nil, err
	}
	shape, err := in[1].ints()
	if err != nil {
		return nil, err
	}
	x := in[0]
	inferred, known := -1, 1
	for k, d := range shape {
		if d == -1 {
			if inferred >= 0 {
				return nil, errors.New("more than one -1 in shape")
			}
			inferred = k
		} else {
			known *= d
		}
	}
	if inferred >= 0 {
		if known == 0 {
			shape[inferred] = 0
		} else {
			shape[inferred] = x.size() / known
		}
	}
	if numElements(shape) != x.size() {
		return nil, fmt.Errorf("cannot reshape %v to %v", x.shape, shape)
	}
	return one(x.withShape(shape), nil)
}

func opExpandDims(c *opCtx, in []*tensor) ([]*tensor, error) {
	if err := wantInputs(in, 2); err != nil {
		return nil, err
	}
	axis, err := in[1].scalarInt()
	if err != nil {
		return nil, err
	}
	x := in[0]
	if axis < 0 {
		axis += x.rank() + 1
	}
	if axis < 0 || axis > x.rank() {
		return nil, fmt.Errorf("axis %d out of range for rank %d", axis, x.rank())
	}
	shape := slices.Insert(slices.Clone(x.shape), axis, 1)
	return one(x.withShape(shape), nil)
}

func opSqueeze(c *opCtx, in []*tensor) ([]*tensor, error) {
	if err := wantInputs(in, 1); err != nil {
		return nil, err
	}
	x := in[0]
	var dims []int
	if a, ok := c.node.attr["squeeze_dims"]; ok && a.List != nil {
		var err error
		if dims, err = a.ints(); err != nil {
			return nil, err
		}
	}
	drop := make([]bool, x.rank())
	if len(dims) == 0 {
		for d, n := range x.shape {
			drop[d] = n == 1
		}
	}
	for _, d := range dims {
		d, err := normAxis(d, x.rank())
		if err != nil {
			return nil, err
		}
		if x.shape[d] != 1 {
			return nil, fmt.Errorf("cannot squeeze dimension %d of shape %v", d, x.shape)
		}
		drop[d] = true
	}
	shape := []int{}
	for d, n := range x.shape {
		if !drop[d] {
			shape = append(shape, n)
		}
	}
	return one(x.withShape(shape), nil)
}

func opTranspose(c *opCtx, in []*tensor) ([]*tensor, error) {
	if err := wantInputs(in, 2); err != nil {
		return nil, err
	}
	perm, err := in[1].ints()
	if err != nil {
		return nil, err
	}
	return one(transpose(in[0], perm))
}

func transpose(x *tensor, perm []int) (*tensor, error) {
	r := x.rank()
	if len(perm) != r {
		return nil, fmt.Errorf("perm %v does not match rank %d", perm, r)
	}
	xs := strides(x.shape)
	// Walk the output in order; output dimension d steps through input
	// dimension perm[d].
	shape := make([]int, r)
	seen := make([]bool, r)
	for d, p := range perm {
		if p < 0 || p >= r || seen[p] {
			return nil, fmt.Errorf("invalid perm %v", perm)
		}
		seen[p] = true
		shape[d] = x.shape[p]
	}
	out := newLike(x.dt, shape)
	n := out.size()
	if n == 0 {
		return out, nil
	}
	idx := make([]int, r)
	src := 0
	for o := 0; o < n; o++ {
		x.copyElem(out, o, src)
		for d := r - 1; d >= 0; d-- {
			idx[d]++
			src += xs[perm[d]]
			if idx[d] < shape[d] {
				break
			}
			src -= idx[d] * xs[perm[d]]
			idx[d] = 0
		}
	}
	return out, nil
}

func opConcat(c *opCtx, in []*tensor) ([]*tensor, error) {
	if len(in) < 2 {
		return nil, errors.New("concat needs values and an axis")
	}
	axisT, values := in[len(in)-1], in[:len(in)-1]
	axis, err := axisT.scalarInt()
	if err != nil {
		return nil, err
	}
	return one(concat(values, axis))
}

func concat(values []*tensor, axis int) (*tensor, error) {
	first := values[0]
	r := first.rank()
	if r == 0 {
		return nil, errors.New("cannot concatenate scalars")
	}
	axis, err := normAxis(axis, r)
	if err != nil {
		return nil, err
	}
	shape := slices.Clone(first.shape)
	shape[axis] = 0
	for _, v := range values {
		if v.rank() != r || v.dt != first.dt {
			return nil, fmt.Errorf("concat of mismatched tensors %v %s and %v %s", first.shape, first.dt, v.shape, v.dt)
		}
		for d := range shape {
			if d != axis && v.shape[d] != first.shape[d] {
				return nil, fmt.Errorf("concat of mismatched shapes %v and %v", first.shape, v.shape)
			}
		}
		shape[axis] += v.shape[axis]
	}
	out := newLike(first.dt, shape)
	outer := numElements(shape[:axis])
	inner := numElements(shape[axis+1:])
	rowLen := shape[axis] * inner
	off := 0
	for _, v := range values {
		chunk := v.shape[axis] * inner
		for o := 0; o < outer; o++ {
			if v.dt == dtFloat {
				copy(out.f[o*rowLen+off:], v.f[o*chunk:(o+1)*chunk])
			} else {
				copy(out.i[o*rowLen+off:], v.i[o*chunk:(o+1)*chunk])
			}
		}
		off += chunk
	}
	return out, nil
}

func opPack(c *opCtx, in []*tensor) ([]*tensor, error) {
	if len(in) == 0 {
		return nil, errors.New("pack needs values")
	}
	axis, err := c.attrInt("axis", 0)
	if err != nil {
		return nil, err
	}
	r := in[0].rank()
	if axis < 0 {
		axis += r + 1
	}
	if axis < 0 || axis > r {
		return nil, fmt.Errorf("axis %d out of range", axis)
	}
	expanded := make([]*tensor, len(in))
	for k, v := range in {
		if !sameShape(v.shape, in[0].shape) {
			return nil, fmt.Errorf("pack of mismatched shapes %v and %v", in[0].shape, v.shape)
		}
		expanded[k] = v.withShape(slices.Insert(slices.Clone(v.shape), axis, 1))
	}
	return one(concat(expanded, axis))
}

func opSplitV(c *opCtx, in []*tensor) ([]*tensor, error) {
	if err := wantInputs(in, 3); err != nil {
		return nil, err
	}
	x := in[0]
	sizes, err := in[1].ints()
	if err != nil {
		return nil, err
	}
	axis, err := in[2].scalarInt()
	if err != nil {
		return nil, err
	}
	if axis, err = normAxis(axis, x.rank()); err != nil {
		return nil, err
	}
	known, unknown := 0, -1
	for k, s := range sizes {
		if s == -1 {
			unknown = k
		} else {
			known += s
		}
	}
	if unknown >= 0 {
		sizes[unknown] = x.shape[axis] - known
	} else if known != x.shape[axis] {
		return nil, fmt.Errorf("split sizes %v do not add up to %d", sizes, x.shape[axis])
	}
	outs := make([]*tensor, len(sizes))
	off := 0
	for k, s := range sizes {
		spec := sliceSpec{start: make([]int, x.rank()), step: make([]int, x.rank()), count: slices.Clone(x.shape)}
		for d := range spec.step {
			spec.step[d] = 1
		}
		spec.start[axis], spec.count[axis] = off, s
		spec.outShape = spec.count
		outs[k] = gatherSlice(x, spec)
		off += s
	}
	return outs, nil
}

func opGatherV2(c *opCtx, in []*tensor) ([]*tensor, error) {
	if err := wantInputs(in, 3); err != nil {
		return nil, err
	}
	params, indices := in[0], in[1]
	axis, err := in[2].scalarInt()
	if err != nil {
		return nil, err
	}
	if axis, err = normAxis(axis, params.rank()); err != nil {
		return nil, err
	}
	idx, err := indices.ints()
	if err != nil {
		return nil, err
	}
	outer := numElements(params.shape[:axis])
	inner := numElements(params.shape[axis+1:])
	dim := params.shape[axis]
	shape := slices.Concat(params.shape[:axis], indices.shape, params.shape[axis+1:])
	out := newLike(params.dt, shape)
	for o := 0; o < outer; o++ {
		for k, ix := range idx {
			if ix < 0 || ix >= dim {
				return nil, fmt.Errorf("gather index %d out of range [0, %d)", ix, dim)
			}
			dst := (o*len(idx) + k) * inner
			src := (o*dim + ix) * inner
			if params.dt == dtFloat {
				copy(out.f[dst:dst+inner], params.f[src:src+inner])
			} else {
				copy(out.i[dst:dst+inner], params.i[src:src+inner])
			}
		}
	}
	return one(out, nil)
}

func opGatherNd(c *opCtx, in []*tensor) ([]*tensor, error) {
	if err := wantInputs(in, 2); err != nil {
		return nil, err
	}
	params, indices := in[0], in[1]
	if indices.rank() < 1 {
		return nil, errors.New("indices must have rank >= 1")
	}
	depth := indices.shape[indices.rank()-1]
	if depth > params.rank() {
		return nil, fmt.Errorf("index depth %d exceeds params rank %d", depth, params.rank())
	}
	idx, err := indices.ints()
	if err != nil {
		return nil, err
	}
	ps := strides(params.shape)
	inner := numElements(params.shape[depth:])
	n := len(idx) / max(depth, 1)
	if depth == 0 {
		n = numElements(indices.shape[:indices.rank()-1])
	}
	shape := slices.Concat(indices.shape[:indices.rank()-1], params.shape[depth:])
	out := newLike(params.dt, shape)
	for k := 0; k < n; k++ {
		src := 0
		for d := 0; d < depth; d++ {
			v := idx[k*depth+d]
			if v < 0 || v >= params.shape[d] {
				return nil, fmt.Errorf("gather_nd index %d out of range for dimension of size %d", v, params.shape[d])
			}
			src += v * ps[d]
		}
		if params.dt == dtFloat {
			copy(out.f[k*inner:(k+1)*inner], params.f[src:src+inner])
		} else {
			copy(out.i[k*inner:(k+1)*inner], params.i[src:src+inner])
		}
	}
	return one(out, nil)
}

func opScatterNd(c *opCtx, in []*tensor) ([]*tensor, error) {
	if err := wantInputs(in, 3); err != nil {
		return nil, err
	}
	indices, updates := in[0], in[1]
	shape, err := in[2].ints()
	if err != nil {
		return nil, err
	}
	if indices.rank() < 1 {
		return nil, errors.New("indices must have rank >= 1")
	}
	depth := indices.shape[indices.rank()-1]
	if depth > len(shape) || depth == 0 {
		return nil, fmt.Errorf("index depth %d does not fit shape %v", depth, shape)
	}
	idx, err := indices.ints()
	if err != nil {
		return nil, err
	}
	out := newLike(updates.dt, shape)
	os := strides(shape)
	inner := numElements(shape[depth:])
	n := len(idx) / depth
	if updates.size() != n*inner {
		return nil, fmt.Errorf("updates %v do not match %d indices of slice size %d", updates.shape, n, inner)
	}
	for k := 0; k < n; k++ {
		dst := 0
		for d := 0; d < depth; d++ {
			v := idx[k*depth+d]
			if v < 0 || v >= shape[d] {
				return nil, fmt.Errorf("scatter index %d out of range for dimension of size %d", v, shape[d])
			}
			dst += v * os[d]
		}
		// TF sums updates that hit the same element.
		if updates.dt == dtFloat {
			o, u := out.f[dst:dst+inner], updates.f[k*inner:(k+1)*inner]
			for j := range o {
				o[j] += u[j]
			}
		} else {
			o, u := out.i[dst:dst+inner], updates.i[k*inner:(k+1)*inner]
			for j := range o {
				o[j] += u[j]
			}
		}
	}
	return one(out, nil)
}

func opSparseToDense(c *opCtx, in []*tensor) ([]*tensor, error) {
	if err := wantInputs(in, 4); err != nil {
		return nil, err
	}
	indices, values, def := in[0], in[2], in[3]
	shape, err := in[1].ints()
	if err != nil {
		return nil, err
	}
	idx, err := indices.ints()
	if err != nil {
		return nil, err
	}
	depth := 1
	if indices.rank() == 2 {
		depth = indices.shape[1]
	} else if indices.rank() > 2 {
		return nil, fmt.Errorf("sparse indices must be a scalar, vector or matrix, got %v", indices.shape)
	}
	if depth != len(shape) {
		return nil, fmt.Errorf("sparse index depth %d does not match output rank %d", depth, len(shape))
	}
	out := newLike(values.dt, shape)
	if def.size() != 1 || def.dt != values.dt {
		return nil, errors.New("default value must be a scalar of the values' type")
	}
	if out.dt == dtFloat {
		for k := range out.f {
			out.f[k] = def.f[0]
		}
	} else {
		for k := range out.i {
			out.i[k] = def.i[0]
		}
	}
	os := strides(shape)
	n := len(idx) / max(depth, 1)
	if values.size() != n && values.size() != 1 {
		return nil, fmt.Errorf("%d values for %d indices", values.size(), n)
	}
	for k := 0; k < n; k++ {
		dst := 0
		for d := 0; d < depth; d++ {
			v := idx[k*depth+d]
			if v < 0 || v >= shape[d] {
				return nil, fmt.Errorf("sparse index %d out of range for dimension of size %d", v, shape[d])
			}
			dst += v * os[d]
		}
		src := k
		if values.size() == 1 {
			src = 0
		}
		values.copyElem(out, dst, src)
	}
	return one(out, nil)
}

func opWhere(c *opCtx, in []*tensor) ([]*tensor, error) {
	if err := wantInputs(in, 1); err != nil {
		return nil, err
	}
	x := in[0]
	r := x.rank()
	var coords []int32
	xs := strides(x.shape)
	for k := 0; k < x.size(); k++ {
		if x.asFloat64(k) == 0 {
			continue
		}
		rem := k
		for d := 0; d < r; d++ {
			coords = append(coords, int32(rem/xs[d]))
			rem %= xs[d]
		}
	}
	out := &tensor{dt: dtInt, shape: []int{len(coords) / max(r, 1), r}, i: coords}
	if coords == nil {
		out.i = []int32{}
	}
	return one(out, nil)
}

func opRange(c *opCtx, in []*tensor) ([]*tensor, error) {
	if err := wantInputs(in, 3); err != nil {
		return nil, err
	}
	start, err := in[0].scalarInt()
	if err != nil {
		return nil, err
	}
	limit, err := in[1].scalarInt()
	if err != nil {
		return nil, err
	}
	delta, err := in[2].scalarInt()
	if err != nil {
		return nil, err
	}
	if delta == 0 {
		return nil, errors.New("range delta 0")
	}
	var vals []int32
	for v := start; (delta > 0 && v < limit) || (delta < 0 && v > limit); v += delta {
		vals = append(vals, int32(v))
	}
	return one(&tensor{dt: dtInt, shape: []int{len(vals)}, i: append([]int32{}, vals...)}, nil)
}

func opCast(c *opCtx, in []*tensor) ([]*tensor, error) {
	if err := wantInputs(in, 1); err != nil {
		return nil, err
	}
	dst, err := c.node.attr["DstT"].dtype()
	if err != nil {
		return nil, err
	}
	x := in[0]
	if x.dt == dst || (x.dt != dtFloat && dst == dtInt) {
		return one(&tensor{dt: dst, shape: x.shape, f: x.f, i: x.i}, nil)
	}
	out := newLike(dst, x.shape)
	switch {
	case dst == dtFloat:
		for k, v := range x.i {
			out.f[k] = float32(v)
		}
	case dst == dtBool && x.dt == dtFloat:
		for k, v := range x.f {
			if v != 0 {
				out.i[k] = 1
			}
		}
	case dst == dtBool:
		for k, v := range x.i {
			if v != 0 {
				out.i[k] = 1
			}
		}
	default: // float -> int truncates toward zero
		for k, v := range x.f {
			out.i[k] = int32(v)
		}
	}
	return one(out, nil)
}

func opLogicalNot(c *opCtx, in []*tensor) ([]*tensor, error) {
	if err := wantInputs(in, 1); err != nil {
		return nil, err
	}
	out := newInt(dtBool, in[0].shape)
	for k, v := range in[0].i {
		if v == 0 {
			out.i[k] = 1
		}
	}
	return one(out, nil)
}

// broadcastShape returns the numpy-style broadcast of two shapes.
func broadcastShape(a, b []int) ([]int, error) {
	r := max(len(a), len(b))
	out := make([]int, r)
	for k := 0; k < r; k++ {
		da, db := 1, 1
		if j := k - (r - len(a)); j >= 0 {
			da = a[j]
		}
		if j := k - (r - len(b)); j >= 0 {
			db = b[j]
		}
		switch {
		case da == db, db == 1:
			out[k] = da
		case da == 1:
			out[k] = db
		default:
			return nil, fmt.Errorf("shapes %v and %v are not broadcastable", a, b)
		}
	}
	return out, nil
}

// broadcastIndex calls fn(o, ia, ib) for every output element with the
// flat indices of the contributing elements of a and b.
func broadcastIndex(outShape, a, b []int, fn func(o, ia, ib int)) {
	r := len(outShape)
	sa, sb := make([]int, r), make([]int, r)
	as, bs := strides(a), strides(b)
	for k := 0; k < r; k++ {
		if j := k - (r - len(a)); j >= 0 && a[j] != 1 {
			sa[k] = as[j]
		}
		if j := k - (r - len(b)); j >= 0 && b[j] != 1 {
			sb[k] = bs[j]
		}
	}
	n := numElements(outShape)
	idx := make([]int, r)
	ia, ib := 0, 0
	for o := 0; o < n; o++ {
		fn(o, ia, ib)
		for d := r - 1; d >= 0; d-- {
			idx[d]++
			ia += sa[d]
			ib += sb[d]
			if idx[d] < outShape[d] {
				break
			}
			ia -= idx[d] * sa[d]
			ib -= idx[d] * sb[d]
			idx[d] = 0
		}
	}
}

// binaryKind lets the hot element-wise loops be written out without a
// function call per element.
type binaryKind int

const (
	kindOther binaryKind = iota
	kindAdd
	kindSub
	kindMul
)

func binaryOp(kind binaryKind, ff func(a, b float32) float32, fi func(a, b int32) int32) opFunc {
	return func(c *opCtx, in []*tensor) ([]*tensor, error) {
		if err := wantInputs(in, 2); err != nil {
			return nil, err
		}
		a, b := in[0], in[1]
		if a.dt != b.dt {
			return nil, fmt.Errorf("mismatched operand types %s and %s", a.dt, b.dt)
		}
		if a.dt != dtFloat && fi == nil {
			return nil, fmt.Errorf("op not defined for %s", a.dt)
		}
		shape, err := broadcastShape(a.shape, b.shape)
		if err != nil {
			return nil, err
		}
		out := newLike(a.dt, shape)
		if a.dt == dtFloat {
			binaryFloat(out, a, b, kind, ff)
		} else {
			broadcastIndex(shape, a.shape, b.shape, func(o, ia, ib int) { out.i[o] = fi(a.i[ia], b.i[ib]) })
		}
		return one(out, nil)
	}
}

// binaryFloat has fast paths for the float shapes that dominate run time:
// equal shapes, a scalar operand, and a vector broadcast along the last axis
// (bias, layer-norm scale). The common ops get dedicated loops because a
// function call per element costs more than the arithmetic.
func binaryFloat(out, a, b *tensor, kind binaryKind, f func(a, b float32) float32) {
	switch {
	case sameShape(a.shape, b.shape):
		floatLoop(out.f, a.f, b.f, kind, f)
	case b.size() == 1 && out.size() == a.size():
		y := b.f[0]
		for k := range out.f {
			out.f[k] = f(a.f[k], y)
		}
	case a.size() == 1 && out.size() == b.size():
		x := a.f[0]
		for k := range out.f {
			out.f[k] = f(x, b.f[k])
		}
	case out.size() == a.size() && isTrailing(b.shape, a.shape) && b.size() > 0:
		n := b.size()
		for o := 0; o < len(out.f); o += n {
			floatLoop(out.f[o:o+n], a.f[o:o+n], b.f, kind, f)
		}
	case out.size() == b.size() && isTrailing(a.shape, b.shape) && a.size() > 0:
		n := a.size()
		for o := 0; o < len(out.f); o += n {
			floatLoop(out.f[o:o+n], a.f, b.f[o:o+n], kind, f)
		}
	case out.size() == a.size() && isRowBroadcast(b.shape, a.shape):
		// b is [..., 1] against a [..., n]: one scalar per row (masking).
		n := a.shape[a.rank()-1]
		for r := 0; r*n < len(out.f); r++ {
			y := b.f[r]
			for k := r * n; k < (r+1)*n; k++ {
				out.f[k] = f(a.f[k], y)
			}
		}
	default:
		broadcastIndex(out.shape, a.shape, b.shape, func(o, ia, ib int) { out.f[o] = f(a.f[ia], b.f[ib]) })
	}
}

// floatLoop applies f element-wise over equal-length slices, with inlined
// loops for the ops that run on activations.
func floatLoop(out, a, b []float32, kind binaryKind, f func(a, b float32) float32) {
	a, b = a[:len(out)], b[:len(out)]
	switch kind {
	case kindAdd:
		for k := range out {
			out[k] = a[k] + b[k]
		}
	case kindMul:
		for k := range out {
			out[k] = a[k] * b[k]
		}
	case kindSub:
		for k := range out {
			out[k] = a[k] - b[k]
		}
	default:
		for k := range out {
			out[k] = f(a[k], b[k])
		}
	}
}

// isRowBroadcast reports whether small equals big except that its last
// dimension is 1.
func isRowBroadcast(small, big []int) bool {
	if len(small) != len(big) || len(big) == 0 || small[len(small)-1] != 1 {
		return false
	}
	return sameShape(small[:len(small)-1], big[:len(big)-1])
}

// isTrailing reports whether small, ignoring leading 1s, equals the trailing
// dimensions of big (so small repeats with period small.size()).
func isTrailing(small, big []int) bool {
	s := small
	for len(s) > 0 && s[0] == 1 {
		s = s[1:]
	}
	if len(s) > len(big) {
		return false
	}
	return sameShape(s, big[len(big)-len(s):])
}

func compareOp(f func(a, b float64) bool) opFunc {
	return func(c *opCtx, in []*tensor) ([]*tensor, error) {
		if err := wantInputs(in, 2); err != nil {
			return nil, err
		}
		a, b := in[0], in[1]
		shape, err := broadcastShape(a.shape, b.shape)
		if err != nil {
			return nil, err
		}
		out := newInt(dtBool, shape)
		broadcastIndex(shape, a.shape, b.shape, func(o, ia, ib int) {
			if f(a.asFloat64(ia), b.asFloat64(ib)) {
				out.i[o] = 1
			}
		})
		return one(out, nil)
	}
}

func unaryOp(f func(float32) float32) opFunc {
	return func(c *opCtx, in []*tensor) ([]*tensor, error) {
		if err := wantInputs(in, 1); err != nil {
			return nil, err
		}
		x := in[0]
		if x.dt != dtFloat {
			return nil, fmt.Errorf("expected float32 input, got %s", x.dt)
		}
		out := newFloat(x.shape)
		for k, v := range x.f {
			out.f[k] = f(v)
		}
		return one(out, nil)
	}
}

type reduceKind int

const (
	reduceMax reduceKind = iota
	reduceSum
	reduceMean
	reduceProd
)

func reduceOp(kind reduceKind) opFunc {
	return func(c *opCtx, in []*tensor) ([]*tensor, error) {
		if err := wantInputs(in, 2); err != nil {
			return nil, err
		}
		axes, err := in[1].ints()
		if err != nil {
			return nil, err
		}
		return one(reduce(in[0], axes, c.attrBool("keep_dims"), kind))
	}
}

// reduce folds x over axes. Float sums accumulate in float64, which is at
// least as accurate as TF.js and keeps layer-norm statistics stable.
func reduce(x *tensor, axes []int, keepDims bool, kind reduceKind) (*tensor, error) {
	r := x.rank()
	reduced := make([]bool, r)
	for _, a := range axes {
		a, err := normAxis(a, r)
		if err != nil {
			return nil, err
		}
		reduced[a] = true
	}
	var outShape, keptShape []int
	for d := 0; d < r; d++ {
		if reduced[d] {
			keptShape = append(keptShape, 1)
			if keepDims {
				outShape = append(outShape, 1)
			}
		} else {
			keptShape = append(keptShape, x.shape[d])
			outShape = append(outShape, x.shape[d])
		}
	}
	if outShape == nil {
		outShape = []int{}
	}
	nOut := numElements(keptShape)
	count := 0
	if nOut > 0 {
		count = x.size() / nOut
	}
	if kind == reduceMax && count == 0 {
		return nil, errors.New("max of an empty tensor")
	}
	acc := make([]float64, nOut)
	for k := range acc {
		switch kind {
		case reduceMax:
			acc[k] = math.Inf(-1)
		case reduceProd:
			acc[k] = 1
		}
	}
	apply := func(o, ix int) {
		v := x.asFloat64(ix)
		switch kind {
		case reduceMax:
			acc[o] = max(acc[o], v)
		case reduceSum, reduceMean:
			acc[o] += v
		case reduceProd:
			acc[o] *= v
		}
	}
	// Fast path: reduction over the trailing axes only (layer norm, pooling
	// over the last dimension).
	trailing := true
	seenReduced := false
	for d := 0; d < r; d++ {
		if reduced[d] {
			seenReduced = true
		} else if seenReduced {
			trailing = false
		}
	}
	if trailing && count > 0 {
		if x.dt == dtFloat && kind != reduceMax && kind != reduceProd {
			for o := 0; o < nOut; o++ {
				var s float64
				for _, v := range x.f[o*count : (o+1)*count] {
					s += float64(v)
				}
				acc[o] = s
			}
		} else {
			for o := 0; o < nOut; o++ {
				for j := 0; j < count; j++ {
					apply(o, o*count+j)
				}
			}
		}
	} else {
		broadcastIndex(x.shape, x.shape, keptShape, func(o, ix, io int) { apply(io, ix) })
	}
	out := newLike(x.dt, outShape)
	for k, v := range acc {
		if kind == reduceMean {
			v /= float64(count)
		}
		if out.dt == dtFloat {
			out.f[k] = float32(v)
		} else {
			out.i[k] = int32(v)
		}
	}
	return out, nil
}

func opSoftmax(c *opCtx, in []*tensor) ([]*tensor, error) {
	if err := wantInputs(in, 1); err != nil {
		return nil, err
	}
	x := in[0]
	if x.dt != dtFloat || x.rank() == 0 {
		return nil, errors.New("softmax needs a float tensor of rank >= 1")
	}
	n := x.shape[x.rank()-1]
	out := newFloat(x.shape)
	if n == 0 {
		return one(out, nil)
	}
	for o := 0; o < x.size()/n; o++ {
		row, dst := x.f[o*n:(o+1)*n], out.f[o*n:(o+1)*n]
		m := row[0]
		for _, v := range row {
			m = max(m, v)
		}
		var sum float32
		for k, v := range row {
			e := float32(math.Exp(float64(v - m)))
			dst[k] = e
			sum += e
		}
		for k := range dst {
			dst[k] /= sum
		}
	}
	return one(out, nil)
}

func opBiasAdd(c *opCtx, in []*tensor) ([]*tensor, error) {
	if err := wantInputs(in, 2); err != nil {
		return nil, err
	}
	x, b := in[0], in[1]
	if a, ok := c.node.attr["data_format"]; ok {
		if f, err := a.str(); err == nil && f != "NHWC" && f != "" {
			return nil, fmt.Errorf("unsupported data_format %s", f)
		}
	}
	if b.rank() != 1 || x.rank() < 1 || x.shape[x.rank()-1] != b.shape[0] || x.dt != dtFloat || b.dt != dtFloat {
		return nil, fmt.Errorf("bias %v does not match input %v", b.shape, x.shape)
	}
	out := newFloat(x.shape)
	n := b.shape[0]
	for o := 0; o < x.size(); o += n {
		src, dst := x.f[o:o+n], out.f[o:o+n]
		for k := range dst {
			dst[k] = src[k] + b.f[k]
		}
	}
	return one(out, nil)
}

func opMatMul(c *opCtx, in []*tensor) ([]*tensor, error) {
	if err := wantInputs(in, 2); err != nil {
		return nil, err
	}
	a, b := in[0], in[1]
	if a.rank() != 2 || b.rank() != 2 || a.dt != dtFloat || b.dt != dtFloat {
		return nil, fmt.Errorf("matmul needs float matrices, got %v and %v", a.shape, b.shape)
	}
	ta, tb := c.attrBool("transpose_a"), c.attrBool("transpose_b")
	return one(matmulOp(c, a, b, ta, tb))
}

// matmulOp multiplies 2-D a and b, using the pre-transposed constant when
// the graph prepared one for this node.
func matmulOp(c *opCtx, a, b *tensor, ta, tb bool) (*tensor, error) {
	m, k := a.shape[0], a.shape[1]
	if ta {
		m, k = k, m
	}
	kb, n := b.shape[0], b.shape[1]
	if tb {
		kb, n = n, kb
	}
	if k != kb {
		return nil, fmt.Errorf("inner dimensions differ: %v x %v", a.shape, b.shape)
	}
	af := a.f
	if ta {
		af = make([]float32, m*k)
		transpose2D(af, a.f, k, m)
	}
	var bt []float32
	if p, ok := c.g.transposedB[c.id]; ok {
		bt = p.f
	} else if tb {
		bt = b.f
	} else {
		bt = make([]float32, n*k)
		transpose2D(bt, b.f, k, n)
	}
	out := newFloat([]int{m, n})
	matmulABt(out.f, af, bt, m, k, n)
	return out, nil
}

func opBatchMatMul(c *opCtx, in []*tensor) ([]*tensor, error) {
	if err := wantInputs(in, 2); err != nil {
		return nil, err
	}
	x, y := in[0], in[1]
	if x.rank() < 2 || y.rank() < 2 || x.dt != dtFloat || y.dt != dtFloat {
		return nil, fmt.Errorf("batch matmul needs float tensors of rank >= 2, got %v and %v", x.shape, y.shape)
	}
	adjX, adjY := c.attrBool("adj_x"), c.attrBool("adj_y")
	bx, by := x.shape[:x.rank()-2], y.shape[:y.rank()-2]
	batch := numElements(bx)
	if !sameShape(bx, by) && numElements(by) != 1 {
		return nil, fmt.Errorf("batch dimensions %v and %v differ", bx, by)
	}
	xr, xc := x.shape[x.rank()-2], x.shape[x.rank()-1]
	yr, yc := y.shape[y.rank()-2], y.shape[y.rank()-1]
	m, k := xr, xc
	if adjX {
		m, k = xc, xr
	}
	kb, n := yr, yc
	if adjY {
		kb, n = yc, yr
	}
	if k != kb {
		return nil, fmt.Errorf("inner dimensions differ: %v x %v", x.shape, y.shape)
	}
	out := newFloat(slices.Concat(bx, []int{m, n}))
	var at, bt []float32
	if adjX {
		at = make([]float32, m*k)
	}
	if !adjY {
		bt = make([]float32, n*k)
	}
	for p := 0; p < batch; p++ {
		a := x.f[p*xr*xc : (p+1)*xr*xc]
		yb := 0
		if numElements(by) != 1 {
			yb = p
		}
		b := y.f[yb*yr*yc : (yb+1)*yr*yc]
		if adjX {
			transpose2D(at, a, xr, xc)
			a = at
		}
		if !adjY {
			transpose2D(bt, b, yr, yc)
			b = bt
		}
		matmulABt(out.f[p*m*n:(p+1)*m*n], a, b, m, k, n)
	}
	return one(out, nil)
}

// opConv2D supports the only convolution this model (and the TF.js
// converter's rendering of dense layers) uses: a 1x1 kernel with stride and
// dilation 1, which is a matmul over the channel dimension.
func opConv2D(c *opCtx, in []*tensor) ([]*tensor, error) {
	if err := wantInputs(in, 2); err != nil {
		return nil, err
	}
	x, w := in[0], in[1]
	if x.rank() != 4 || w.rank() != 4 || x.dt != dtFloat || w.dt != dtFloat {
		return nil, fmt.Errorf("conv2d needs 4-D float tensors, got %v and %v", x.shape, w.shape)
	}
	if w.shape[0] != 1 || w.shape[1] != 1 {
		return nil, fmt.Errorf("only 1x1 kernels are supported, got %v", w.shape)
	}
	for _, name := range []string{"strides", "dilations"} {
		if a, ok := c.node.attr[name]; ok && a.List != nil {
			v, err := a.ints()
			if err != nil {
				return nil, err
			}
			for _, s := range v {
				if s != 1 {
					return nil, fmt.Errorf("only unit %s are supported, got %v", name, v)
				}
			}
		}
	}
	if a, ok := c.node.attr["data_format"]; ok {
		if f, err := a.str(); err == nil && f != "NHWC" {
			return nil, fmt.Errorf("unsupported data_format %s", f)
		}
	}
	if x.shape[3] != w.shape[2] {
		return nil, fmt.Errorf("input channels %d do not match kernel %v", x.shape[3], w.shape)
	}
	rows := x.shape[0] * x.shape[1] * x.shape[2]
	a := x.withShape([]int{rows, x.shape[3]})
	b := w.withShape([]int{w.shape[2], w.shape[3]})
	out, err := matmulOp(c, a, b, false, false)
	if err != nil {
		return nil, err
	}
	return one(out.withShape([]int{x.shape[0], x.shape[1], x.shape[2], w.shape[3]}), nil)
}
