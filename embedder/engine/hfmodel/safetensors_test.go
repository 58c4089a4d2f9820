package hfmodel

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSafetensorsRoundTrip(t *testing.T) {
	special := []float64{0, -0.0, 1, -2.5, 65504, 1e-7, 6e-8, -3.0517578125e-05, 0.1, 1234.5678, 1e30}
	path := filepath.Join(t.TempDir(), "x.safetensors")
	var tensors []testTensor
	for _, dt := range []string{"F32", "F16", "BF16"} {
		tensors = append(tensors, testTensor{name: "t." + dt, dtype: dt, shape: []int{len(special)}, data: special})
	}
	tensors = append(tensors, testTensor{name: "ids", dtype: "I64", shape: []int{2, 2}, data: []float64{0, 1, -5, 1 << 40}})
	writeSafetensors(t, path, tensors)
	st, err := openSafetensors(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, tt := range tensors[:3] {
		got, shape, err := st.float32s(tt.name, len(special))
		if err != nil {
			t.Fatal(err)
		}
		if len(shape) != 1 || shape[0] != len(special) {
			t.Errorf("%s: shape %v", tt.name, shape)
		}
		for i, want := range tt.quantized() {
			if tt.dtype == "F16" && special[i] == 1e30 {
				if !math.IsInf(float64(got[i]), 1) {
					t.Errorf("F16 1e30: got %v, want +Inf", got[i])
				}
				continue
			}
			if float64(got[i]) != float64(float32(want)) {
				t.Errorf("%s[%d]: got %v, want %v", tt.name, i, got[i], want)
			}
		}
	}
	ids, shape, err := st.ints("ids")
	if err != nil || len(shape) != 2 || ids[2] != -5 || ids[3] != 1<<40 {
		t.Errorf("ints: %v %v %v", ids, shape, err)
	}
	if _, _, err := st.float32s("t.F32", 3, 4); err == nil || !strings.Contains(err.Error(), "shape") {
		t.Errorf("wrong shape: %v", err)
	}
	if _, _, err := st.float32s("nope"); err == nil || !strings.Contains(err.Error(), `no such tensor "nope"`) {
		t.Errorf("missing tensor: %v", err)
	}
	if _, _, err := st.float32s("ids"); err == nil || !strings.Contains(err.Error(), "dtype I64 is not supported") {
		t.Errorf("int as float: %v", err)
	}
}

// TestF16AllValues checks f16ToF32 against the test's own decoder on all
// 65,536 half values.
func TestF16AllValues(t *testing.T) {
	for h := range 1 << 16 {
		got, want := float64(f16ToF32(uint16(h))), decodeF16(uint16(h))
		if math.IsNaN(want) {
			if !math.IsNaN(got) {
				t.Fatalf("%#04x: got %v, want NaN", h, got)
			}
			continue
		}
		if got != want || math.Signbit(got) != math.Signbit(want) {
			t.Fatalf("%#04x: got %v, want %v", h, got, want)
		}
	}
}

func TestSafetensorsMalformed(t *testing.T) {
	dir := t.TempDir()
	header := func(h string, data int) []byte {
		out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
		return append(append(out, h...), make([]byte, data)...)
	}
	cases := map[string][]byte{
		"shorter than 8 bytes":          []byte("abc"),
		"header length":                 binary.LittleEndian.AppendUint64(nil, 1<<40),
		"not a JSON object":             header("[1,2]", 0),
		`unknown dtype "F99"`:           header(`{"a":{"dtype":"F99","shape":[1],"data_offsets":[0,4]}}`, 4),
		"outside the 4 data bytes":      header(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, 4),
		"8 bytes for F32[3]":            header(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, 8),
		"does not fit in the 8 data":    header(`{"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}}`, 8),
		"data offsets [4, 0]":           header(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}}`, 8),
		"tensor \"a\": json: cannot un": header(`{"a":{"dtype":"F32","shape":"x","data_offsets":[0,4]}}`, 4),
	}
	for want, data := range cases {
		p := filepath.Join(dir, "m.safetensors")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := openSafetensors(p)
		if err == nil {
			st.Close()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to mention %q", err, want)
		}
	}
}
