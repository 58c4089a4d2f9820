package hfmodel

import "math"

// Constants of the AVX2 activation kernels (activations_amd64.s), in the
// order the kernels read them.
var (
	expConsts = [16]float32{
		math.Log2E, 0.693359375, -2.12194440e-4,
		1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1,
		-87.3, 88.3, 1, 127,
	}
	geluConsts = [16]float32{
		1 / math.Sqrt2, 4, -4,
		-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
		-7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02,
		-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03,
		-1.42647390514189e-02,
		0.5,
	}
)

// geluErf is the exact GELU, x·Φ(x) = x/2·(1 + erf(x/√2)) (transformers'
// "gelu"), with erf to float32 precision: eight lanes at a time with AVX2,
// the rest in scalar code.
func geluErf(v []float32) {
	done := 0
	if useAVX2 && len(v) >= 8 {
		geluAVX2(&v[0], len(v)/8, &geluConsts)
		done = len(v) / 8 * 8
	}
	for i := done; i < len(v); i++ {
		x := float64(v[i])
		v[i] = float32(0.5 * x * (1 + erfApprox(x/math.Sqrt2)))
	}
}

// softmaxScaled sets row to softmax(row · scale).
func softmaxScaled(row []float32, scale float32) {
	m := float32(math.Inf(-1))
	for _, v := range row {
		if v > m { // not the max builtin: it is much slower on floats
			m = v
		}
	}
	var sum float64
	done := 0
	if useAVX2 && len(row) >= 8 {
		var lanes [8]float32
		expAVX2(&row[0], len(row)/8, m, scale, &expConsts, &lanes)
		for _, l := range lanes {
			sum += float64(l)
		}
		done = len(row) / 8 * 8
	}
	for i := done; i < len(row); i++ {
		e := expApprox(float64((row[i] - m) * scale))
		row[i] = float32(e)
		sum += e
	}
	inv := float32(1 / sum)
	for i := range row {
		row[i] *= inv
	}
}
