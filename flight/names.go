package flight

import "fmt"

// MaxNameLen is the longest graph name accepted.
const MaxNameLen = 128

// ValidateName reports whether name is a graph name: 1 to 128 characters
// from [A-Za-z0-9._-], and neither "." nor "..". Names become file names
// under the data directory, so nothing else is let through.
func ValidateName(name string) error {
	if name == "" {
		return fmt.Errorf("flight: empty graph name")
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("flight: graph name of %d bytes is longer than %d", len(name), MaxNameLen)
	}
	if name == "." || name == ".." {
		return fmt.Errorf("flight: graph name %q is not allowed", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return fmt.Errorf("flight: graph name %q has %q at byte %d; use only letters, digits, '.', '_' and '-'", name, c, i)
		}
	}
	return nil
}
