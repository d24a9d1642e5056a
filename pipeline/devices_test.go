package pipeline

import (
	"errors"
	"slices"
	"testing"
)

// TestParseDevices checks the --devices values.
func TestParseDevices(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
		bad  bool
	}{
		{"all", nil, false}, {"", nil, false}, {"0", []int{0}, false}, {"0,1,3", []int{0, 1, 3}, false},
		{"0,0", []int{0, 0}, false}, {" 1 , 2 ", []int{1, 2}, false},
		{"-1", nil, true}, {"a", nil, true}, {"0,,1", nil, true}, {"1.5", nil, true},
	} {
		got, err := ParseDevices(c.in)
		if c.bad {
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("ParseDevices(%q) = %v, %v; want an ErrInvalid error", c.in, got, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParseDevices(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}
