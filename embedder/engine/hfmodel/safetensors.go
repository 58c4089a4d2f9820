package hfmodel

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
)

// The safetensors format (https://github.com/huggingface/safetensors):
//
//	8 bytes   N, little-endian uint64
//	N bytes   JSON header: {"name": {"dtype": "F32", "shape": [2, 3],
//	          "data_offsets": [begin, end]}, ..., "__metadata__": {...}}
//	rest      the tensors' bytes, little-endian, row-major; offsets are
//	          relative to the first byte after the header
//
// Only the header is read when a file is opened; each tensor is read when
// asked for, so a model never needs twice its size in memory.

// maxHeaderBytes bounds the JSON header (real ones are a few hundred KB).
const maxHeaderBytes = 100 << 20

// dtypeSize is the byte size of each safetensors dtype.
var dtypeSize = map[string]int{
	"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1,
	"I16": 2, "U16": 2, "F16": 2, "BF16": 2,
	"I32": 4, "U32": 4, "F32": 4,
	"I64": 8, "U64": 8, "F64": 8,
}

// tensorInfo is one entry of the header.
type tensorInfo struct {
	DType       string   `json:"dtype"`
	Shape       []int    `json:"shape"`
	DataOffsets [2]int64 `json:"data_offsets"`
}

func (t tensorInfo) numel() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// safetensors is an open .safetensors file.
type safetensors struct {
	path    string
	f       *os.File
	base    int64 // file offset of the data section
	tensors map[string]tensorInfo
}

// openSafetensors reads and validates the header of path: every tensor's
// byte range must match its dtype and shape and lie inside the file.
func openSafetensors(path string) (*safetensors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := parseSafetensors(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return st, nil
}

func parseSafetensors(f *os.File, path string) (*safetensors, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	var lenBuf [8]byte
	if _, err := io.ReadFull(f, lenBuf[:]); err != nil {
		return nil, fmt.Errorf("%s: not a safetensors file (shorter than 8 bytes)", path)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n < 2 || n > maxHeaderBytes || int64(n) > size-8 {
		return nil, fmt.Errorf("%s: not a safetensors file (header length %d, file size %d)", path, n, size)
	}
	hdr := make([]byte, n)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return nil, fmt.Errorf("%s: read header: %w", path, err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(hdr, &raw); err != nil {
		return nil, fmt.Errorf("%s: safetensors header is not a JSON object: %w", path, err)
	}
	st := &safetensors{path: path, f: f, base: 8 + int64(n), tensors: map[string]tensorInfo{}}
	dataLen := size - st.base
	for name, msg := range raw {
		if name == "__metadata__" {
			continue
		}
		var ti tensorInfo
		if err := json.Unmarshal(msg, &ti); err != nil {
			return nil, fmt.Errorf("%s: tensor %q: %w", path, name, err)
		}
		es, ok := dtypeSize[ti.DType]
		if !ok {
			return nil, fmt.Errorf("%s: tensor %q: unknown dtype %q", path, name, ti.DType)
		}
		numel := int64(1)
		for _, d := range ti.Shape {
			if d < 0 || (d > 0 && numel > dataLen/int64(d)) {
				return nil, fmt.Errorf("%s: tensor %q: shape %v does not fit in the %d data bytes", path, name, ti.Shape, dataLen)
			}
			numel *= int64(d)
		}
		b, e := ti.DataOffsets[0], ti.DataOffsets[1]
		if b < 0 || e < b || e > dataLen {
			return nil, fmt.Errorf("%s: tensor %q: data offsets [%d, %d] outside the %d data bytes (truncated file?)", path, name, b, e, dataLen)
		}
		if e-b != numel*int64(es) {
			return nil, fmt.Errorf("%s: tensor %q: %d bytes for %s%v (want %d)", path, name, e-b, ti.DType, ti.Shape, numel*int64(es))
		}
		st.tensors[name] = ti
	}
	return st, nil
}

func (st *safetensors) Close() error { return st.f.Close() }

// names lists the tensors, sorted.
func (st *safetensors) names() []string {
	out := make([]string, 0, len(st.tensors))
	for n := range st.tensors {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// errNoTensor is wrapped by float32s and ints when a tensor is absent.
var errNoTensor = errors.New("no such tensor")

// bytes reads a tensor's raw data.
func (st *safetensors) bytes(name string) (tensorInfo, []byte, error) {
	ti, ok := st.tensors[name]
	if !ok {
		return ti, nil, fmt.Errorf("%s: %w %q", st.path, errNoTensor, name)
	}
	buf := make([]byte, ti.DataOffsets[1]-ti.DataOffsets[0])
	if _, err := st.f.ReadAt(buf, st.base+ti.DataOffsets[0]); err != nil {
		return ti, nil, fmt.Errorf("%s: read tensor %q: %w", st.path, name, err)
	}
	return ti, buf, nil
}

// float32s reads a floating-point (or int8, as model2vec quantises) tensor
// as float32, checking its shape when want is not nil (-1 matches any size).
func (st *safetensors) float32s(name string, want ...int) ([]float32, []int, error) {
	ti, buf, err := st.bytes(name)
	if err != nil {
		return nil, nil, err
	}
	if err := checkShape(ti.Shape, want); err != nil {
		return nil, nil, fmt.Errorf("%s: tensor %q: %w", st.path, name, err)
	}
	n := ti.numel()
	out := make([]float32, n)
	le := binary.LittleEndian
	switch ti.DType {
	case "F32":
		for i := range out {
			out[i] = math.Float32frombits(le.Uint32(buf[4*i:]))
		}
	case "F16":
		for i := range out {
			out[i] = f16ToF32(le.Uint16(buf[2*i:]))
		}
	case "BF16":
		for i := range out {
			out[i] = math.Float32frombits(uint32(le.Uint16(buf[2*i:])) << 16)
		}
	case "F64":
		for i := range out {
			out[i] = float32(math.Float64frombits(le.Uint64(buf[8*i:])))
		}
	case "I8":
		for i := range out {
			out[i] = float32(int8(buf[i]))
		}
	default:
		return nil, nil, fmt.Errorf("%s: tensor %q: dtype %s is not supported (F32, F16, BF16, F64, I8)", st.path, name, ti.DType)
	}
	return out, ti.Shape, nil
}

// ints reads an integer tensor.
func (st *safetensors) ints(name string) ([]int, []int, error) {
	ti, buf, err := st.bytes(name)
	if err != nil {
		return nil, nil, err
	}
	out := make([]int, ti.numel())
	le := binary.LittleEndian
	switch ti.DType {
	case "I64", "U64":
		for i := range out {
			out[i] = int(int64(le.Uint64(buf[8*i:])))
		}
	case "I32":
		for i := range out {
			out[i] = int(int32(le.Uint32(buf[4*i:])))
		}
	case "U32":
		for i := range out {
			out[i] = int(le.Uint32(buf[4*i:]))
		}
	default:
		return nil, nil, fmt.Errorf("%s: tensor %q: dtype %s is not an integer type (I64, I32, U32)", st.path, name, ti.DType)
	}
	return out, ti.Shape, nil
}

func checkShape(got, want []int) error {
	if want == nil {
		return nil
	}
	if len(got) != len(want) {
		return fmt.Errorf("shape %v, want %v", got, want)
	}
	for i := range want {
		if want[i] >= 0 && got[i] != want[i] {
			return fmt.Errorf("shape %v, want %v", got, want)
		}
	}
	return nil
}

// f16ToF32 converts an IEEE 754 half-precision value (including
// subnormals, infinities and NaN) to float32.
func f16ToF32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: renormalise
		e := uint32(127 - 15 + 1)
		for frac&0x400 == 0 {
			frac <<= 1
			e--
		}
		frac &= 0x3ff
		return math.Float32frombits(sign | e<<23 | frac<<13)
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	default:
		return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
	}
}
