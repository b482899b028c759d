package server

import (
	"context"
	"net"
	"sync"
)

// heldConn is a plain TCP connection of the HTTP server whose writes a
// handler can hold back and send in one write call (hold, send). net/http
// writes a response through a 4 KiB buffer, so an answer of more than
// about 4 KB with its header (ten GloVe rows are ~6 KB) left in two write
// calls: two TCP segments and two wake-ups of the client, for one answer.
// HTTP/1.1 writes a connection from the goroutine serving it, the one that
// runs the handler, so the held bytes need no lock.
type heldConn struct {
	*net.TCPConn
	held *[]byte // nil: not holding
}

// heldBufs holds hold buffers between answers.
var heldBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxHeld bounds the answers held whole (and the buffers kept for reuse):
// a larger body is written straight from the handler's buffer in one call
// after the header's.
const maxHeld = 64 << 10

func (c *heldConn) Write(p []byte) (int, error) {
	if c.held != nil {
		*c.held = append(*c.held, p...)
		return len(p), nil
	}
	return c.TCPConn.Write(p)
}

// hold starts holding writes.
func (c *heldConn) hold() {
	c.held = heldBufs.Get().(*[]byte)
	*c.held = (*c.held)[:0]
}

// send writes what was held in one call and stops holding. On an error the
// connection is closed, as net/http closes one whose write failed.
func (c *heldConn) send() error {
	b := c.held
	c.held = nil
	var err error
	if len(*b) > 0 {
		if _, err = c.TCPConn.Write(*b); err != nil {
			_ = c.TCPConn.Close()
		}
	}
	if cap(*b) <= maxHeld+4<<10 {
		heldBufs.Put(b)
	}
	return err
}

// holdListener makes the plain TCP connections it accepts heldConns (a TLS
// connection is left as it is: net/http must see its *tls.Conn).
type holdListener struct{ net.Listener }

func (l holdListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok && err == nil {
		return &heldConn{TCPConn: tc}, nil
	}
	return c, err
}

type heldConnKey struct{}

// withHeldConn is the HTTP server's ConnContext: it makes a heldConn
// reachable from its requests' contexts (heldConnOf).
func withHeldConn(ctx context.Context, c net.Conn) context.Context {
	if hc, ok := c.(*heldConn); ok {
		return context.WithValue(ctx, heldConnKey{}, hc)
	}
	return ctx
}

// heldConnOf returns the heldConn a request came on, or nil.
func heldConnOf(ctx context.Context) *heldConn {
	hc, _ := ctx.Value(heldConnKey{}).(*heldConn)
	return hc
}
