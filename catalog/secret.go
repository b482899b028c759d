package catalog

import (
	"net/url"
	"regexp"
	"strings"
)

// redacted replaces every secret in error messages and descriptions.
const redacted = "xxxxx"

// dsnSecrets returns the passwords a PostgreSQL DSN carries, raw and
// unescaped, in URL userinfo, a password query parameter or a
// keyword/value password= pair, longest first. It is best effort for
// malformed strings, which is why errors are also scrubbed with
// redactDSNText.
func dsnSecrets(dsn string) []string {
	var out []string
	add := func(s string) {
		if s != "" {
			out = append(out, s)
			if u, err := url.PathUnescape(s); err == nil && u != s {
				out = append(out, u)
			}
		}
	}
	if i := strings.Index(dsn, "://"); i >= 0 {
		rest := dsn[i+3:]
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if c := strings.Index(rest[:at], ":"); c >= 0 {
				add(rest[c+1 : at])
			}
		}
		if q := strings.Index(rest, "?"); q >= 0 {
			if vals, err := url.ParseQuery(rest[q+1:]); err == nil {
				for _, v := range vals["password"] {
					add(v)
				}
			}
		}
	}
	for _, m := range kvPassword.FindAllStringSubmatch(dsn, -1) {
		add(strings.Trim(m[1], "'"))
	}
	// Longest first, so that a secret containing another is replaced whole.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && len(out[j]) > len(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

var (
	kvPassword  = regexp.MustCompile(`password=('[^']*'|[^ &]*)`)
	urlPassword = regexp.MustCompile(`(://[^:/@]*):[^@/]*@`)
)

// redactDSNText hides password-shaped parts of any text that may echo a DSN.
func redactDSNText(s string) string {
	s = urlPassword.ReplaceAllString(s, "${1}:"+redacted+"@")
	return kvPassword.ReplaceAllString(s, "password="+redacted)
}

// describePostgres describes a PostgreSQL DSN without its password.
func describePostgres(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" && u.User == nil {
		return "postgres (" + redactDSNText(dsn) + ")"
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", redacted)
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// scrubbed is an error whose message has secrets removed; it still
// unwraps to the original for errors.Is and errors.As.
type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// scrub returns err with every secret, and anything shaped like a DSN
// password, removed from its message.
func scrub(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, redacted)
	}
	msg = redactDSNText(msg)
	if msg == err.Error() {
		return err
	}
	return &scrubbed{msg: msg, err: err}
}
