package flight

import "fmt"

// MaxNameLen is the longest graph name accepted.
const MaxNameLen = 128

// ValidateName reports whether name is a graph name: 1 to 128 characters
// from [A-Za-z0-9._-], not starting with '.' or '-'. Names become file names
// under the data directory, so nothing else is let through: no hidden
// files, "." or "..", and nothing a command line would take for an option.
func ValidateName(name string) error {
	if name == "" {
		return fmt.Errorf("flight: empty graph name")
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("flight: graph name of %d bytes is longer than %d", len(name), MaxNameLen)
	}
	if name[0] == '.' || name[0] == '-' {
		return fmt.Errorf("flight: graph name %q starts with %q; start it with a letter, a digit or '_'", name, name[0])
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
