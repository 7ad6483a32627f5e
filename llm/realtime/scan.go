package realtime

import (
	"encoding/json"
	"errors"
	"fmt"
)

// A minimal, allocation-free JSON scanner for the top level of server
// events (RFC 8259). It validates the whole document's syntax, hands out
// raw value slices of the top-level members, and leaves nested values to
// encoding/json on the rare events that need them. It exists so that the
// frequent response.output_audio.delta events decode without allocating.

var errSyntax = errors.New("json syntax")

// maxDepth bounds nesting so hostile input cannot blow the stack.
const maxDepth = 64

// forEachMember calls fn for each member of the top-level object in data,
// with the raw key (between the quotes, still escaped) and the raw value.
func forEachMember(data []byte, fn func(key, val []byte) error) error {
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return fmt.Errorf("%w: want object at %d", errSyntax, i)
	}
	i = skipWS(data, i+1)
	if i < len(data) && data[i] == '}' {
		return trailing(data, i+1)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return fmt.Errorf("%w: want key at %d", errSyntax, i)
		}
		kEnd, err := skipString(data, i)
		if err != nil {
			return err
		}
		key := data[i+1 : kEnd-1]
		i = skipWS(data, kEnd)
		if i >= len(data) || data[i] != ':' {
			return fmt.Errorf("%w: want ':' at %d", errSyntax, i)
		}
		i = skipWS(data, i+1)
		vEnd, err := skipValue(data, i, 1)
		if err != nil {
			return err
		}
		if err := fn(key, data[i:vEnd]); err != nil {
			return err
		}
		i = skipWS(data, vEnd)
		if i >= len(data) {
			return fmt.Errorf("%w: unterminated object", errSyntax)
		}
		switch data[i] {
		case ',':
			i = skipWS(data, i+1)
		case '}':
			return trailing(data, i+1)
		default:
			return fmt.Errorf("%w: want ',' or '}' at %d", errSyntax, i)
		}
	}
}

func trailing(data []byte, i int) error {
	if i = skipWS(data, i); i != len(data) {
		return fmt.Errorf("%w: trailing data at %d", errSyntax, i)
	}
	return nil
}

func skipWS(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue returns the index just past the value starting at i.
func skipValue(data []byte, i, depth int) (int, error) {
	if i >= len(data) {
		return 0, fmt.Errorf("%w: want value at end", errSyntax)
	}
	if depth > maxDepth {
		return 0, fmt.Errorf("%w: nested deeper than %d", errSyntax, maxDepth)
	}
	switch c := data[i]; {
	case c == '"':
		return skipString(data, i)
	case c == '{':
		return skipContainer(data, i, '}', true, depth)
	case c == '[':
		return skipContainer(data, i, ']', false, depth)
	case c == 't':
		return skipLiteral(data, i, "true")
	case c == 'f':
		return skipLiteral(data, i, "false")
	case c == 'n':
		return skipLiteral(data, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(data, i)
	}
	return 0, fmt.Errorf("%w: unexpected %q at %d", errSyntax, data[i], i)
}

func skipContainer(data []byte, i int, end byte, object bool, depth int) (int, error) {
	i = skipWS(data, i+1)
	if i < len(data) && data[i] == end {
		return i + 1, nil
	}
	for {
		if object {
			if i >= len(data) || data[i] != '"' {
				return 0, fmt.Errorf("%w: want key at %d", errSyntax, i)
			}
			k, err := skipString(data, i)
			if err != nil {
				return 0, err
			}
			i = skipWS(data, k)
			if i >= len(data) || data[i] != ':' {
				return 0, fmt.Errorf("%w: want ':' at %d", errSyntax, i)
			}
			i = skipWS(data, i+1)
		}
		v, err := skipValue(data, i, depth+1)
		if err != nil {
			return 0, err
		}
		i = skipWS(data, v)
		if i >= len(data) {
			return 0, fmt.Errorf("%w: unterminated container", errSyntax)
		}
		switch data[i] {
		case ',':
			i = skipWS(data, i+1)
		case end:
			return i + 1, nil
		default:
			return 0, fmt.Errorf("%w: unexpected %q at %d", errSyntax, data[i], i)
		}
	}
}

// skipString returns the index just past the closing quote of the string
// starting at i, validating escapes and rejecting control characters.
func skipString(data []byte, i int) (int, error) {
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return j + 1, nil
		case c < 0x20:
			return 0, fmt.Errorf("%w: control character in string at %d", errSyntax, j)
		case c == '\\':
			j++
			if j >= len(data) {
				return 0, fmt.Errorf("%w: unterminated escape", errSyntax)
			}
			switch data[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(data) {
					return 0, fmt.Errorf("%w: short \\u escape", errSyntax)
				}
				for _, h := range data[j+1 : j+5] {
					if !isHex(h) {
						return 0, fmt.Errorf("%w: bad \\u escape at %d", errSyntax, j)
					}
				}
				j += 4
			default:
				return 0, fmt.Errorf("%w: bad escape at %d", errSyntax, j)
			}
		}
	}
	return 0, fmt.Errorf("%w: unterminated string", errSyntax)
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func skipLiteral(data []byte, i int, lit string) (int, error) {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return 0, fmt.Errorf("%w: bad literal at %d", errSyntax, i)
	}
	return i + len(lit), nil
}

// skipNumber accepts -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func skipNumber(data []byte, i int) (int, error) {
	start := i
	if data[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(data) && data[i] == '0' {
		i++
	} else if digits() == 0 {
		return 0, fmt.Errorf("%w: bad number at %d", errSyntax, start)
	}
	if i < len(data) && data[i] == '.' {
		i++
		if digits() == 0 {
			return 0, fmt.Errorf("%w: bad fraction at %d", errSyntax, start)
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0, fmt.Errorf("%w: bad exponent at %d", errSyntax, start)
		}
	}
	return i, nil
}

// rawString returns the content of a raw JSON string value. Strings without
// escapes are returned as a sub-slice (no allocation); others are unescaped
// by encoding/json. ok is false if raw is not a string.
func rawString(raw []byte) (s []byte, ok bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return nil, false
	}
	inner := raw[1 : len(raw)-1]
	for _, c := range inner {
		if c == '\\' {
			var str string
			if json.Unmarshal(raw, &str) != nil {
				return nil, false
			}
			return []byte(str), true
		}
	}
	return inner, true
}

// setString sets *dst to the string in raw, allocating only when the value
// changed (ids repeat across the deltas of one response). null clears.
func setString(dst *string, raw []byte) error {
	if string(raw) == "null" {
		*dst = ""
		return nil
	}
	s, ok := rawString(raw)
	if !ok {
		return fmt.Errorf("%w: want string, got %.20s", errSyntax, raw)
	}
	if string(s) != *dst {
		*dst = string(s)
	}
	return nil
}

// setInt parses an integer value (null clears).
func setInt(dst *int, raw []byte) error {
	if string(raw) == "null" {
		*dst = 0
		return nil
	}
	b, neg := raw, false
	if len(b) > 0 && b[0] == '-' {
		b, neg = b[1:], true
	}
	if len(b) == 0 || len(b) > 18 {
		return fmt.Errorf("%w: want integer, got %.20s", errSyntax, raw)
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return fmt.Errorf("%w: want integer, got %.20s", errSyntax, raw)
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	*dst = n
	return nil
}
