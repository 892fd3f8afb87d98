package splitmix

import "testing"

// TestAt checks the stream against SplitMix64's reference outputs for
// seed 1234567 (the values of the published C generator, next() from a
// state of 1234567).
func TestAt(t *testing.T) {
	for i, want := range []uint64{6457827717110365317, 3203168211198807973, 9817491932198370423, 4593380528125082431, 16408922859458223821} {
		if got := At(1234567, uint64(i)); got != want {
			t.Errorf("At(1234567, %d) = %d, want %d", i, got, want)
		}
	}
	if u := Unit(^uint64(0)); u >= 1 || Unit(0) != 0 {
		t.Errorf("Unit out of [0, 1): %v", u)
	}
}
