package hfmodel

import "math"

// Scalar approximations of exp and erf, accurate to float32 precision and
// several times faster than math.Exp and math.Erf, which dominate the
// softmax and GELU otherwise (approx_test.go measures their error).

// expApprox is e^x with a relative error below 1e-8 for x ≥ -87 (0 below,
// where float32 softmax weights would underflow anyway): x = n·ln2 + r with
// |r| ≤ ln2/2, e^r by its Taylor series to r⁷, 2^n put in the exponent.
func expApprox(x float64) float64 {
	if x < -87 {
		return 0
	}
	if x > 88 {
		return math.Inf(1)
	}
	n := math.Floor(x*math.Log2E + 0.5)
	r := x - n*math.Ln2
	p := 1 + r*(1+r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120+r*(1.0/720+r*(1.0/5040)))))))
	return math.Float64frombits(math.Float64bits(p) + uint64(int64(n))<<52)
}

// erfApprox is Eigen's rational approximation of erf for float32 (also
// used by XLA): x·P(x²)/Q(x²) on [-4, 4], ±1 beyond, where float32's erf
// is ±1 too. Its absolute error is below 1e-7.
func erfApprox(x float64) float64 {
	// Plain comparisons: the min and max builtins, which order NaN and
	// signed zeros, made this four times slower.
	if x > 4 {
		x = 4
	} else if x < -4 {
		x = -4
	}
	x2 := x * x
	p := x2*-2.72614225801306e-10 + 2.77068142495902e-08
	p = x2*p + -2.10102402082508e-06
	p = x2*p + -5.69250639462346e-05
	p = x2*p + -7.34990630326855e-04
	p = x2*p + -2.95459980854025e-03
	p = x2*p + -1.60960333262415e-02
	q := x2*-1.45660718464996e-05 + -2.13374055278905e-04
	q = x2*q + -1.68282697438203e-03
	q = x2*q + -7.37332916720468e-03
	q = x2*q + -1.42647390514189e-02
	return x * p / q
}
