package uselite

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// modelJSON is the subset of the TF.js graph-model format (model.json) that
// the interpreter needs.
type modelJSON struct {
	ModelTopology struct {
		Node []nodeJSON `json:"node"`
	} `json:"modelTopology"`
	WeightsManifest []struct {
		Paths   []string     `json:"paths"`
		Weights []weightJSON `json:"weights"`
	} `json:"weightsManifest"`
}

type nodeJSON struct {
	Name  string              `json:"name"`
	Op    string              `json:"op"`
	Input []string            `json:"input"`
	Attr  map[string]attrJSON `json:"attr"`
}

// attrJSON is a TensorFlow AttrValue in its protobuf-JSON form. Integers are
// encoded as strings; "s" is either base64 or a list of bytes depending on
// the converter version.
type attrJSON struct {
	I    json.RawMessage `json:"i"`
	F    *float64        `json:"f"`
	B    *bool           `json:"b"`
	S    json.RawMessage `json:"s"`
	Type json.RawMessage `json:"type"`
	List *struct {
		I []json.RawMessage `json:"i"`
	} `json:"list"`
}

type weightJSON struct {
	Name         string `json:"name"`
	Shape        []int  `json:"shape"`
	Dtype        string `json:"dtype"`
	Quantization *struct {
		Dtype string   `json:"dtype"`
		Scale *float64 `json:"scale"`
		Min   *float64 `json:"min"`
	} `json:"quantization"`
}

func parseJSONInt(raw json.RawMessage) (int64, error) {
	s := strings.Trim(string(raw), `"`)
	return strconv.ParseInt(s, 10, 64)
}

func (a attrJSON) int() (int, error) {
	if len(a.I) == 0 {
		return 0, errors.New("attribute has no integer value")
	}
	v, err := parseJSONInt(a.I)
	return int(v), err
}

func (a attrJSON) ints() ([]int, error) {
	if a.List == nil {
		return nil, errors.New("attribute has no list value")
	}
	out := make([]int, len(a.List.I))
	for k, raw := range a.List.I {
		v, err := parseJSONInt(raw)
		if err != nil {
			return nil, err
		}
		out[k] = int(v)
	}
	return out, nil
}

func (a attrJSON) str() (string, error) {
	if len(a.S) == 0 {
		return "", errors.New("attribute has no string value")
	}
	if a.S[0] == '"' {
		var b64 string
		if err := json.Unmarshal(a.S, &b64); err != nil {
			return "", err
		}
		b, err := base64.StdEncoding.DecodeString(b64)
		return string(b), err
	}
	var bytes []byte
	var ints []int
	if err := json.Unmarshal(a.S, &ints); err != nil {
		return "", err
	}
	for _, v := range ints {
		bytes = append(bytes, byte(v))
	}
	return string(bytes), nil
}

// tfType maps a TensorFlow DataType attribute (numeric enum or "DT_*" name)
// to the interpreter's dtype.
func (a attrJSON) dtype() (dtype, error) {
	if len(a.Type) == 0 {
		return 0, errors.New("attribute has no type value")
	}
	s := strings.Trim(string(a.Type), `"`)
	switch s {
	case "1", "DT_FLOAT":
		return dtFloat, nil
	case "3", "9", "DT_INT32", "DT_INT64":
		return dtInt, nil
	case "10", "DT_BOOL":
		return dtBool, nil
	}
	return 0, fmt.Errorf("unsupported data type %s", s)
}

// graphNode is one executable node with its inputs resolved to value slots.
type graphNode struct {
	name    string
	op      string
	inputs  []valueRef
	attr    map[string]attrJSON
	outputs int // number of output slots
}

// valueRef names output k of node n.
type valueRef struct{ node, out int }

// graph is a loaded, topologically ordered TF.js graph model.
type graph struct {
	nodes  []graphNode
	consts map[int]*tensor
	// transposedB holds, for MatMul/Conv2D nodes whose right operand is a
	// constant, that weight matrix transposed to [N, K] so the matmul kernel
	// can run contiguous dot products (computed once at load).
	transposedB  map[int]*tensor
	order        []int // execution order of non-constant nodes
	placeholders map[string]int
	output       valueRef
	lastUse      []int // position in order after which a node's values are dead
}

func loadGraph(dir string) (*graph, error) {
	path := filepath.Join(dir, "model.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read model graph: %w", err)
	}
	var mj modelJSON
	if err := json.Unmarshal(raw, &mj); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	if len(mj.ModelTopology.Node) == 0 {
		return nil, fmt.Errorf("parse %s: no nodes in modelTopology", path)
	}
	weights, err := loadWeights(dir, &mj)
	if err != nil {
		return nil, err
	}

	g := &graph{consts: map[int]*tensor{}, transposedB: map[int]*tensor{}, placeholders: map[string]int{}}
	index := map[string]int{}
	for k, n := range mj.ModelTopology.Node {
		if _, dup := index[n.Name]; dup {
			return nil, fmt.Errorf("model graph: duplicate node %q", n.Name)
		}
		index[n.Name] = k
	}
	consumed := make([]bool, len(mj.ModelTopology.Node))
	for k, n := range mj.ModelTopology.Node {
		gn := graphNode{name: n.Name, op: n.Op, attr: n.Attr, outputs: 1}
		for _, in := range n.Input {
			if strings.HasPrefix(in, "^") { // control dependency: no data
				continue
			}
			name, out := in, 0
			if c := strings.LastIndexByte(in, ':'); c >= 0 {
				if v, err := strconv.Atoi(in[c+1:]); err == nil {
					name, out = in[:c], v
				}
			}
			src, ok := index[name]
			if !ok {
				return nil, fmt.Errorf("model graph: node %q reads unknown node %q", n.Name, name)
			}
			consumed[src] = true
			gn.inputs = append(gn.inputs, valueRef{src, out})
		}
		switch n.Op {
		case "Const":
			w, ok := weights[n.Name]
			if !ok {
				return nil, fmt.Errorf("model graph: constant %q has no weights in the manifest", n.Name)
			}
			g.consts[k] = w
		case "Placeholder":
			g.placeholders[n.Name] = k
		case "SplitV", "Split":
			num, err := n.Attr["num_split"].int()
			if err != nil {
				return nil, fmt.Errorf("model graph: node %q: num_split: %w", n.Name, err)
			}
			gn.outputs = num
		}
		if _, ok := opTable[n.Op]; !ok && n.Op != "Const" && n.Op != "Placeholder" {
			return nil, fmt.Errorf("model graph: node %q uses unsupported op %s", n.Name, n.Op)
		}
		g.nodes = append(g.nodes, gn)
	}
	var sinks []int
	for k, n := range g.nodes {
		if !consumed[k] && n.op != "Const" && n.op != "Placeholder" {
			sinks = append(sinks, k)
		}
	}
	if len(sinks) != 1 {
		return nil, fmt.Errorf("model graph: expected exactly one output node, found %d", len(sinks))
	}
	g.output = valueRef{sinks[0], 0}
	for _, name := range []string{"indices", "values"} {
		if _, ok := g.placeholders[name]; !ok {
			return nil, fmt.Errorf("model graph: missing input placeholder %q", name)
		}
	}
	if err := g.sort(); err != nil {
		return nil, err
	}
	g.prepareWeights()
	return g, nil
}

// sort orders the nodes the output depends on so that every node runs after
// its inputs, and records when each value can be released.
func (g *graph) sort() error {
	state := make([]uint8, len(g.nodes)) // 0 new, 1 visiting, 2 done
	var visit func(k int) error
	visit = func(k int) error {
		switch state[k] {
		case 1:
			return fmt.Errorf("model graph: cycle through node %q", g.nodes[k].name)
		case 2:
			return nil
		}
		state[k] = 1
		for _, in := range g.nodes[k].inputs {
			if err := visit(in.node); err != nil {
				return err
			}
		}
		state[k] = 2
		if _, isConst := g.consts[k]; !isConst {
			g.order = append(g.order, k)
		}
		return nil
	}
	if err := visit(g.output.node); err != nil {
		return err
	}
	g.lastUse = make([]int, len(g.nodes))
	for pos, k := range g.order {
		for _, in := range g.nodes[k].inputs {
			g.lastUse[in.node] = pos
		}
	}
	g.lastUse[g.output.node] = len(g.order)
	return nil
}

// prepareWeights pre-transposes constant right-hand matmul operands.
func (g *graph) prepareWeights() {
	for _, k := range g.order {
		n := &g.nodes[k]
		if n.op != "MatMul" && n.op != "Conv2D" {
			continue
		}
		if n.op == "MatMul" {
			if tb := n.attr["transpose_b"].B; tb != nil && *tb {
				continue
			}
		}
		w, ok := g.consts[n.inputs[1].node]
		if !ok || w.dt != dtFloat || w.rank() < 2 {
			continue
		}
		kdim, ndim := w.shape[w.rank()-2], w.shape[w.rank()-1]
		if numElements(w.shape) != kdim*ndim {
			continue
		}
		t := newFloat([]int{ndim, kdim})
		transpose2D(t.f, w.f, kdim, ndim)
		g.transposedB[k] = t
	}
}

// transpose2D writes the [cols, rows] transpose of the [rows, cols] matrix src.
func transpose2D(dst, src []float32, rows, cols int) {
	const blk = 32
	for r0 := 0; r0 < rows; r0 += blk {
		r1 := min(r0+blk, rows)
		for c0 := 0; c0 < cols; c0 += blk {
			c1 := min(c0+blk, cols)
			for r := r0; r < r1; r++ {
				for c := c0; c < c1; c++ {
					dst[c*rows+r] = src[r*cols+c]
				}
			}
		}
	}
}

// loadWeights reads every weight group's shards and decodes the tensors in
// manifest order (TF.js concatenates the shards of a group into one buffer).
func loadWeights(dir string, mj *modelJSON) (map[string]*tensor, error) {
	out := map[string]*tensor{}
	for gi, group := range mj.WeightsManifest {
		var buf []byte
		for _, p := range group.Paths {
			if p == "" || strings.Contains(p, "..") || filepath.IsAbs(p) {
				return nil, fmt.Errorf("load weights: invalid shard path %q", p)
			}
			b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
			if err != nil {
				return nil, fmt.Errorf("load weights shard %s: %w", p, err)
			}
			buf = append(buf, b...)
		}
		off := 0
		for _, w := range group.Weights {
			t, n, err := decodeWeight(w, buf[off:])
			if err != nil {
				return nil, fmt.Errorf("load weights %s (group %d): %w", w.Name, gi, err)
			}
			off += n
			out[w.Name] = t
		}
		if off != len(buf) {
			return nil, fmt.Errorf("load weights group %d: manifest describes %d bytes but shards hold %d", gi, off, len(buf))
		}
	}
	return out, nil
}

// decodeWeight decodes one tensor from the start of buf and returns it with
// the number of bytes consumed. It handles the TF.js weight quantization
// schemes (uint8/uint16 affine, float16), although this model ships float32.
func decodeWeight(w weightJSON, buf []byte) (*tensor, int, error) {
	for _, d := range w.Shape {
		if d < 0 {
			return nil, 0, fmt.Errorf("negative dimension in shape %v", w.Shape)
		}
	}
	n := numElements(w.Shape)
	shape := append([]int(nil), w.Shape...)
	need := func(bytesPer int) error {
		if len(buf) < n*bytesPer {
			return fmt.Errorf("shard data truncated: need %d bytes, have %d", n*bytesPer, len(buf))
		}
		return nil
	}
	if q := w.Quantization; q != nil {
		if w.Dtype != "float32" {
			return nil, 0, fmt.Errorf("quantized weights of dtype %s are not supported", w.Dtype)
		}
		t := newFloat(shape)
		switch q.Dtype {
		case "uint8", "uint16":
			if q.Scale == nil || q.Min == nil {
				return nil, 0, errors.New("affine quantization without scale/min")
			}
			scale, minv := float32(*q.Scale), float32(*q.Min)
			width := 1
			if q.Dtype == "uint16" {
				width = 2
			}
			if err := need(width); err != nil {
				return nil, 0, err
			}
			for k := range t.f {
				var v uint16
				if width == 1 {
					v = uint16(buf[k])
				} else {
					v = binary.LittleEndian.Uint16(buf[2*k:])
				}
				t.f[k] = float32(v)*scale + minv
			}
			return t, n * width, nil
		case "float16":
			if err := need(2); err != nil {
				return nil, 0, err
			}
			for k := range t.f {
				t.f[k] = halfToFloat(binary.LittleEndian.Uint16(buf[2*k:]))
			}
			return t, n * 2, nil
		}
		return nil, 0, fmt.Errorf("unsupported quantization dtype %s", q.Dtype)
	}
	if err := need(4); err != nil {
		return nil, 0, err
	}
	switch w.Dtype {
	case "float32":
		t := newFloat(shape)
		for k := range t.f {
			t.f[k] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*k:]))
		}
		return t, n * 4, nil
	case "int32":
		t := newInt(dtInt, shape)
		for k := range t.i {
			t.i[k] = int32(binary.LittleEndian.Uint32(buf[4*k:]))
		}
		return t, n * 4, nil
	case "bool":
		t := newInt(dtBool, shape)
		if len(buf) < n {
			return nil, 0, fmt.Errorf("shard data truncated: need %d bytes, have %d", n, len(buf))
		}
		for k := range t.i {
			if buf[k] != 0 {
				t.i[k] = 1
			}
		}
		return t, n, nil
	}
	return nil, 0, fmt.Errorf("unsupported weight dtype %s", w.Dtype)
}

// halfToFloat converts an IEEE 754 binary16 value to float32.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal
		for mant&0x400 == 0 {
			mant <<= 1
			exp--
		}
		exp++
		mant &= 0x3ff
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
}

// run executes the graph for one set of inputs. Every call allocates its own
// intermediate tensors, so concurrent runs never share mutable state.
func (g *graph) run(inputs map[string]*tensor) (*tensor, error) {
	vals := make([][]*tensor, len(g.nodes))
	for k, c := range g.consts {
		vals[k] = []*tensor{c}
	}
	for name, k := range g.placeholders {
		t, ok := inputs[name]
		if !ok {
			return nil, fmt.Errorf("missing input %q", name)
		}
		vals[k] = []*tensor{t}
	}
	args := make([]*tensor, 0, 8)
	for pos, k := range g.order {
		n := &g.nodes[k]
		if n.op == "Placeholder" {
			continue
		}
		args = args[:0]
		for _, in := range n.inputs {
			v := vals[in.node]
			if in.out >= len(v) || v[in.out] == nil {
				return nil, fmt.Errorf("node %s (%s): input %s:%d not computed", n.name, n.op, g.nodes[in.node].name, in.out)
			}
			args = append(args, v[in.out])
		}
		out, err := opTable[n.op](&opCtx{g: g, node: n, id: k}, args)
		if err != nil {
			return nil, fmt.Errorf("node %s (%s): %w", n.name, n.op, err)
		}
		vals[k] = out
		// Release inputs no later node reads, so long texts do not keep every
		// intermediate alive until the end of the run.
		for _, in := range n.inputs {
			if g.lastUse[in.node] == pos {
				if _, isConst := g.consts[in.node]; !isConst {
					vals[in.node] = nil
				}
			}
		}
	}
	return vals[g.output.node][g.output.out], nil
}
