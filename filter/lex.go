package filter

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

type tokKind uint8

const (
	tokEOF    tokKind = iota
	tokIdent          // bare identifier or keyword
	tokQIdent         // "quoted identifier"
	tokString         // 'string'
	tokNumber         // 12, -3.5, 1e6
	tokOp             // = != <> < <= > >=
	tokLParen
	tokRParen
	tokComma
)

type token struct {
	kind tokKind
	text string // identifier, operator, number text, or unquoted string value
	off  int    // byte offset in the predicate text
}

// keyword reports whether t is the bare keyword kw (case-insensitive).
func (t token) keyword(kw string) bool {
	return t.kind == tokIdent && strings.EqualFold(t.text, kw)
}

// lex splits text into tokens.
func lex(text string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(text) {
		r, w := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			return nil, errAt(text, i, ErrSyntax, "the text is not valid UTF-8")
		case unicode.IsSpace(r):
			i += w
		case r == '(':
			toks = append(toks, token{tokLParen, "(", i})
			i++
		case r == ')':
			toks = append(toks, token{tokRParen, ")", i})
			i++
		case r == ',':
			toks = append(toks, token{tokComma, ",", i})
			i++
		case r == '=':
			toks = append(toks, token{tokOp, "=", i})
			i++
		case r == '!':
			if !strings.HasPrefix(text[i:], "!=") {
				return nil, errAt(text, i, ErrSyntax, "unexpected '!'; did you mean '!='?")
			}
			toks = append(toks, token{tokOp, "!=", i})
			i += 2
		case r == '<':
			switch {
			case strings.HasPrefix(text[i:], "<="):
				toks = append(toks, token{tokOp, "<=", i})
				i += 2
			case strings.HasPrefix(text[i:], "<>"):
				toks = append(toks, token{tokOp, "!=", i})
				i += 2
			default:
				toks = append(toks, token{tokOp, "<", i})
				i++
			}
		case r == '>':
			if strings.HasPrefix(text[i:], ">=") {
				toks = append(toks, token{tokOp, ">=", i})
				i += 2
			} else {
				toks = append(toks, token{tokOp, ">", i})
				i++
			}
		case r == '\'' || r == '"':
			s, n, ok := quoted(text[i:], byte(r))
			if !ok {
				what := "string"
				if r == '"' {
					what = "quoted identifier"
				}
				return nil, errAt(text, i, ErrSyntax, "unterminated %s: close it with %c (write %c%c for a %c inside it)", what, r, r, r, r)
			}
			k := tokString
			if r == '"' {
				k = tokQIdent
				if s == "" {
					return nil, errAt(text, i, ErrSyntax, "empty quoted identifier")
				}
			}
			toks = append(toks, token{k, s, i})
			i += n
		case r == '-' || r == '+' || r == '.' || (r >= '0' && r <= '9'):
			n := scanNumber(text[i:])
			if n == 0 {
				return nil, errAt(text, i, ErrSyntax, "unexpected %q; a number needs digits", r)
			}
			toks = append(toks, token{tokNumber, text[i : i+n], i})
			i += n
		case r == '_' || unicode.IsLetter(r):
			j := i + w
			for j < len(text) {
				r2, w2 := utf8.DecodeRuneInString(text[j:])
				if r2 != '_' && !unicode.IsLetter(r2) && !unicode.IsDigit(r2) {
					break
				}
				j += w2
			}
			toks = append(toks, token{tokIdent, text[i:j], i})
			i = j
		default:
			return nil, errAt(text, i, ErrSyntax, "unexpected character %q; quote odd column names with double quotes", r)
		}
	}
	toks = append(toks, token{tokEOF, "", len(text)})
	return toks, nil
}

// quoted reads a literal quoted with q at the start of s, where qq stands
// for one q; it returns the value, the bytes consumed and whether it was
// closed.
func quoted(s string, q byte) (string, int, bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != q {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == q {
			b.WriteByte(q)
			i++
			continue
		}
		return b.String(), i + 1, true
	}
	return "", 0, false
}

// scanNumber returns the length of the number at the start of s: an
// optional sign, digits with an optional fraction, an optional exponent.
func scanNumber(s string) int {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '-' || s[j] == '+') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j {
			i = k
		}
	}
	return i
}
