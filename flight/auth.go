package flight

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// tokenAuth checks basic credentials against the token of the auth token
// file and hands out a bearer token derived from it.
//
// Choices: any user name is accepted (the token is the secret; the name is
// only logged). The bearer token is a hash of the file's token, so it does
// not echo the secret back, needs no session table, and stays valid across
// restarts until the file changes. The file's token itself is accepted as a
// bearer token too, for clients that set "authorization: Bearer <token>"
// without a handshake.
type tokenAuth struct {
	token   []byte
	session []byte
}

// readTokenFile reads the token: the file's content with surrounding white
// space removed, which must not be empty.
func readTokenFile(path string) (*tokenAuth, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("flight: auth token file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return nil, fmt.Errorf("flight: auth token file %s is empty", path)
	}
	sum := sha256.Sum256([]byte("pathctl-flight-session\x00" + token))
	return &tokenAuth{token: []byte(token), session: []byte(hex.EncodeToString(sum[:]))}, nil
}

// Validate checks basic credentials: the password must be the token.
func (a *tokenAuth) Validate(username, password string) (string, error) {
	if subtle.ConstantTimeCompare([]byte(password), a.token) != 1 {
		return "", status.Errorf(codes.Unauthenticated, "flight: wrong token for user %q: the password must be the content of the server's --auth-token-file", username)
	}
	return string(a.session), nil
}

// IsValid checks a bearer token.
func (a *tokenAuth) IsValid(bearer string) (any, error) {
	b := []byte(bearer)
	if subtle.ConstantTimeCompare(b, a.session) == 1 || subtle.ConstantTimeCompare(b, a.token) == 1 {
		return "token", nil
	}
	return nil, status.Error(codes.Unauthenticated, "flight: invalid bearer token; authenticate again with basic auth (any user, the server's token as password)")
}
