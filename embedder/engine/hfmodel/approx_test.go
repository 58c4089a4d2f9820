package hfmodel

import (
	"math"
	"testing"
)

func TestExpApprox(t *testing.T) {
	worst := 0.0
	for x := -87.0; x <= 88; x += 0.000731 {
		got, want := expApprox(x), math.Exp(x)
		worst = max(worst, math.Abs(got-want)/want)
	}
	t.Logf("largest relative error of expApprox: %.2g", worst)
	if worst > 1e-8 {
		t.Errorf("expApprox: relative error %.2g", worst)
	}
	if expApprox(-100) != 0 || !math.IsInf(expApprox(100), 1) || expApprox(0) != 1 {
		t.Error("expApprox at the edges")
	}
}

func TestErfApprox(t *testing.T) {
	worst := 0.0
	for x := -8.0; x <= 8; x += 0.0001 {
		worst = max(worst, math.Abs(erfApprox(x)-math.Erf(x)))
	}
	t.Logf("largest absolute error of erfApprox: %.2g", worst)
	if worst > 1e-7 {
		t.Errorf("erfApprox: absolute error %.2g", worst)
	}
}
