package flight

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// tokenAuth checks basic credentials against the token of the auth token
// file and hands out session tokens for the bearer calls that follow.
//
// Choices: any user name is accepted (the token is the secret; the name is
// only logged). A session token is 32 random bytes, valid for the session
// TTL and kept in memory only, so a restart logs every client in again. The
// file's token is never accepted as a bearer token: it travels only in the
// handshake. Sessions are looked up by the SHA-256 of the bearer token and
// the hashes compared with subtle.ConstantTimeCompare, so the time a check
// takes says nothing about the session tokens held.
type tokenAuth struct {
	token []byte
	ttl   time.Duration
	now   func() time.Time

	mu       sync.Mutex
	sessions map[[sha256.Size]byte]time.Time // expiry by hash of the session token
}

// readTokenFile reads the token: the file's content with surrounding white
// space removed, which must not be empty.
func readTokenFile(path string, ttl time.Duration) (*tokenAuth, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("flight: auth token file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return nil, fmt.Errorf("flight: auth token file %s is empty", path)
	}
	return &tokenAuth{token: []byte(token), ttl: ttl, now: time.Now, sessions: map[[sha256.Size]byte]time.Time{}}, nil
}

// Validate checks basic credentials (the password must be the token) and
// returns a new session token.
func (a *tokenAuth) Validate(username, password string) (string, error) {
	if subtle.ConstantTimeCompare([]byte(password), a.token) != 1 {
		return "", status.Errorf(codes.Unauthenticated, "flight: wrong token for user %q: the password must be the content of the server's --auth-token-file", username)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", status.Errorf(codes.Internal, "flight: session token: %v", err)
	}
	session := hex.EncodeToString(raw[:])
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, expiry := range a.sessions { // forget expired sessions
		if !now.Before(expiry) {
			delete(a.sessions, k)
		}
	}
	a.sessions[sha256.Sum256([]byte(session))] = now.Add(a.ttl)
	return session, nil
}

// IsValid checks a bearer token: a session token handed out by Validate
// that has not expired.
func (a *tokenAuth) IsValid(bearer string) (any, error) {
	key := sha256.Sum256([]byte(bearer))
	a.mu.Lock()
	expiry, ok := a.sessions[key]
	var stored [sha256.Size]byte
	if ok {
		stored = key
	}
	a.mu.Unlock()
	if subtle.ConstantTimeCompare(stored[:], key[:]) != 1 {
		return nil, status.Error(codes.Unauthenticated, "flight: invalid bearer token; authenticate again with basic auth (any user, the server's token as password)")
	}
	if !a.now().Before(expiry) {
		a.mu.Lock()
		delete(a.sessions, key)
		a.mu.Unlock()
		return nil, status.Errorf(codes.Unauthenticated, "flight: session expired (sessions last %v, --session-ttl); authenticate again with basic auth", a.ttl)
	}
	return "token", nil
}
