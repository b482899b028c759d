package server

import (
	"strconv"
	"time"
)

// serverTiming is the Server-Timing header of a search answer (W3C Server
// Timing): the milliseconds spent reading and checking the body and
// waiting for a running slot (admit), searching and joining the source
// rows (search), and encoding the answer (encode). Writing the answer
// comes after the header and is not in it. A header, not a member of the
// body, so that equal searches keep equal bodies.
func serverTiming(start, admitted, searched, encoded time.Time) string {
	b := make([]byte, 0, 64)
	stage := func(name string, from, to time.Time) {
		if len(b) > 0 {
			b = append(b, ", "...)
		}
		b = append(b, name...)
		b = append(b, ";dur="...)
		b = strconv.AppendFloat(b, float64(to.Sub(from).Microseconds())/1000, 'f', -1, 64)
	}
	stage("admit", start, admitted)
	stage("search", admitted, searched)
	stage("encode", searched, encoded)
	return string(b)
}
