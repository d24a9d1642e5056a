package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pathctl/pathctl/flight"
)

// TestServeBudgetFlags: --max-memory (a size with units), --max-uploads
// and --idle-timeout reach flight.Config; left out, the server's defaults
// apply; zero or negative values are usage errors naming the flag.
func TestServeBudgetFlags(t *testing.T) {
	cfg, err := parsedConfig(t)
	if err != nil || cfg.MaxMemory != 0 || cfg.MaxUploads != 0 || cfg.IdleTimeout != flight.DefaultIdleTimeout {
		t.Errorf("defaults: memory %d, uploads %d, idle %v, %v", cfg.MaxMemory, cfg.MaxUploads, cfg.IdleTimeout, err)
	}
	cfg, err = parsedConfig(t, "--max-memory", "2GiB", "--max-uploads", "3", "--idle-timeout", "5s")
	if err != nil || cfg.MaxMemory != 2<<30 || cfg.MaxUploads != 3 || cfg.IdleTimeout != 5*time.Second {
		t.Errorf("set: memory %d, uploads %d, idle %v, %v", cfg.MaxMemory, cfg.MaxUploads, cfg.IdleTimeout, err)
	}
	for _, args := range [][]string{{"--max-memory", "0"}, {"--max-memory", "-1GiB"}, {"--max-uploads", "0"}, {"--idle-timeout", "0s"}, {"--idle-timeout", "-1s"}} {
		var usage usageError
		if _, err := parsedConfig(t, args...); !errors.As(err, &usage) || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("%v: %v; want a usage error naming %s", args, err, args[0])
		}
	}
	if m := flight.DefaultMaxMemory(); m <= 0 {
		t.Errorf("DefaultMaxMemory() = %d", m)
	}
}
