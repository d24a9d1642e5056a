package flight

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

func writeToken(t *testing.T, token string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// listGraphs returns the names ListFlights gives, or its error.
func listGraphs(ctx context.Context, cl flight.Client) ([]string, error) {
	stream, err := cl.ListFlights(ctx, &flight.Criteria{})
	if err != nil {
		return nil, err
	}
	var names []string
	for {
		info, err := stream.Recv()
		if err != nil {
			if err.Error() == "EOF" {
				return names, nil
			}
			return names, err
		}
		names = append(names, info.FlightDescriptor.Path[1])
	}
}

func TestAuth(t *testing.T) {
	const token = "s3cret-token"
	ts := startServer(t, Config{AuthTokenFile: writeToken(t, token)})
	cl := dial(t, ts.addr)
	ctx := context.Background()
	c := smallCase("g", "1 2 3")

	t.Run("no credentials", func(t *testing.T) {
		if _, err := listGraphs(ctx, cl); codeOf(err) != "Unauthenticated" {
			t.Errorf("ListFlights: %v", err)
		}
		if _, err := cl.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"graph": "g"}`)}); codeOf(err) != "Unauthenticated" {
			t.Errorf("GetFlightInfo: %v", err)
		}
		if _, _, err := doGet(ctx, cl, `{"graph": "g"}`, memory.DefaultAllocator); codeOf(err) != "Unauthenticated" {
			t.Errorf("DoGet: %v", err)
		}
		if _, err := doAction(ctx, cl, ActionInfo, ""); codeOf(err) != "Unauthenticated" {
			t.Errorf("DoAction: %v", err)
		}
	})
	t.Run("wrong token", func(t *testing.T) {
		_, err := cl.AuthenticateBasicToken(ctx, "alice", "guess")
		if codeOf(err) != "Unauthenticated" || !strings.Contains(err.Error(), "--auth-token-file") {
			t.Errorf("got %v", err)
		}
		bad := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer guess")
		if _, err := listGraphs(bad, cl); codeOf(err) != "Unauthenticated" {
			t.Errorf("wrong bearer: %v", err)
		}
		basic := metadata.AppendToOutgoingContext(ctx, "authorization", "Basic "+token)
		if _, err := listGraphs(basic, cl); codeOf(err) != "Unauthenticated" {
			t.Errorf("basic credentials outside the handshake: %v", err)
		}
	})
	t.Run("basic then bearer", func(t *testing.T) {
		authed, err := cl.AuthenticateBasicToken(ctx, "alice", token)
		if err != nil {
			t.Fatal(err)
		}
		md, _ := metadata.FromOutgoingContext(authed)
		bearer := md.Get("authorization")
		if len(bearer) != 1 || !strings.HasPrefix(bearer[0], "Bearer ") || strings.Contains(bearer[0], token) {
			t.Errorf("bearer header %q: want a session token that is not the secret", bearer)
		}
		uploadCase(t, authed, cl, "g", c)
		names, err := listGraphs(authed, cl)
		if err != nil || strings.Join(names, ",") != "g" {
			t.Errorf("list: %v, %v", names, err)
		}
		_, recs, err := doGet(authed, cl, `{"graph": "g"}`, memory.DefaultAllocator)
		if err != nil || len(recs) == 0 {
			t.Errorf("DoGet: %v", err)
		}
		releaseAll(recs)
		if _, err := doAction(authed, cl, ActionDrop, "g"); err != nil {
			t.Errorf("drop: %v", err)
		}
	})
	t.Run("the token as bearer", func(t *testing.T) {
		// The secret travels only in the handshake.
		direct := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
		if _, err := listGraphs(direct, cl); codeOf(err) != "Unauthenticated" {
			t.Errorf("the raw token as a bearer: %v; want UNAUTHENTICATED", err)
		}
	})
	t.Run("sessions differ", func(t *testing.T) {
		a, err1 := cl.AuthenticateBasicToken(ctx, "alice", token)
		b, err2 := cl.AuthenticateBasicToken(ctx, "alice", token)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		ma, _ := metadata.FromOutgoingContext(a)
		mb, _ := metadata.FromOutgoingContext(b)
		if ma.Get("authorization")[0] == mb.Get("authorization")[0] {
			t.Errorf("two handshakes got the same session token %q", ma.Get("authorization")[0])
		}
	})
	if !strings.Contains(ts.logs.String(), "code=Unauthenticated") {
		t.Errorf("refused calls are not logged")
	}
}

func TestAuthTokenFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, content, want string }{
		{"missing", "", "no such file"},
		{"empty", "  \n", "is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			if tc.name != "missing" {
				os.WriteFile(path, []byte(tc.content), 0o600)
			}
			_, err := NewServer(Config{DataDir: t.TempDir(), Addr: "127.0.0.1:0", AuthTokenFile: path})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// selfSigned writes a certificate for 127.0.0.1 and localhost and its key.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "pathctl test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	const token = "tls-and-token"
	ts := startServer(t, Config{TLSCert: certFile, TLSKey: keyFile, AuthTokenFile: writeToken(t, token)})
	ctx := context.Background()
	secure := dial(t, ts.addr, grpc.WithTransportCredentials(credentials.NewClientTLSFromCert(pool, "")))
	authed, err := secure.AuthenticateBasicToken(ctx, "bob", token)
	if err != nil {
		t.Fatal(err)
	}
	uploadCase(t, authed, secure, "g", smallCase("g", "1 2 3", "2 3 1"))
	_, recs, err := doGet(authed, secure, `{"graph": "g", "layout": "matrix"}`, memory.DefaultAllocator)
	if err != nil || len(recs) != 1 || recs[0].NumRows() != 3 {
		t.Errorf("DoGet over TLS: %v", err)
	}
	releaseAll(recs)

	plain := dial(t, ts.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := listGraphs(short, plain); err == nil {
		t.Errorf("a plaintext client was served by a TLS server")
	}
	untrusted := dial(t, ts.addr, grpc.WithTransportCredentials(credentials.NewClientTLSFromCert(x509.NewCertPool(), "")))
	if _, err := listGraphs(short, untrusted); codeOf(err) != "Unavailable" {
		t.Errorf("a client that does not trust the certificate: %v", err)
	}

	if _, err := NewServer(Config{DataDir: t.TempDir(), Addr: "127.0.0.1:0", TLSCert: certFile}); err == nil {
		t.Errorf("--tls-cert without --tls-key accepted")
	}
	if _, err := NewServer(Config{DataDir: t.TempDir(), Addr: "127.0.0.1:0", TLSCert: keyFile, TLSKey: certFile}); err == nil {
		t.Errorf("swapped certificate and key accepted")
	}
}

// TestListenAddr: beyond loopback the server needs authentication and TLS
// both, or --insecure-public, and the error names exactly what is missing.
// Before, 0.0.0.0 without either, and ":PORT" with TLS alone, listened on
// every interface with only a warning.
func TestListenAddr(t *testing.T) {
	for _, tc := range []struct {
		addr                  string
		auth, tls, insecure   bool
		want, noteHas, errHas string
	}{
		{addr: ":8815", want: "127.0.0.1:8815", noteHas: "loopback only"},
		{addr: ":8815", auth: true, tls: true, want: ":8815"},
		{addr: ":8815", tls: true, errHas: "needs authentication; set --auth-token-file,"},
		{addr: ":8815", auth: true, errHas: "needs TLS; set --tls-cert and --tls-key,"},
		{addr: ":8815", insecure: true, want: ":8815", noteHas: "every interface without authentication and TLS (--insecure-public)"},
		{addr: "127.0.0.1:9", want: "127.0.0.1:9", noteHas: "loopback only"},
		{addr: "localhost:9", want: "localhost:9", noteHas: "loopback only"},
		{addr: "[::1]:9", want: "[::1]:9", noteHas: "loopback only"},
		{addr: "127.0.0.1:9", auth: true, tls: true, want: "127.0.0.1:9"},
		// On loopback the note names only what is missing (a token without
		// TLS is not "without authentication").
		{addr: "127.0.0.1:9", want: "127.0.0.1:9", noteHas: "loopback only, without authentication and TLS; set --auth-token-file, --tls-cert and --tls-key"},
		{addr: "127.0.0.1:9", auth: true, want: "127.0.0.1:9", noteHas: "loopback only, without TLS; set --tls-cert and --tls-key to serve"},
		{addr: "localhost:9", tls: true, want: "localhost:9", noteHas: "loopback only, without authentication; set --auth-token-file to serve"},
		{addr: "0.0.0.0:9", errHas: "needs authentication and TLS; set --auth-token-file, --tls-cert and --tls-key, or pass --insecure-public"},
		{addr: "0.0.0.0:9", tls: true, errHas: "needs authentication;"},
		{addr: "0.0.0.0:9", auth: true, errHas: "needs TLS;"},
		{addr: "example.org:9", auth: true, errHas: "needs TLS;"},
		{addr: "0.0.0.0:9", auth: true, tls: true, want: "0.0.0.0:9"},
		{addr: "0.0.0.0:9", auth: true, insecure: true, want: "0.0.0.0:9", noteHas: "without TLS (--insecure-public)"},
		{addr: "8815", errHas: "want HOST:PORT"},
	} {
		got, note, err := listenAddr(tc.addr, tc.auth, tc.tls, tc.insecure)
		bad := got != tc.want || !strings.Contains(note, tc.noteHas) || (tc.noteHas == "" && note != "")
		if tc.errHas != "" {
			bad = err == nil || !strings.Contains(err.Error(), tc.errHas)
		} else if err != nil {
			bad = true
		}
		if bad {
			t.Errorf("listenAddr(%q, auth %v, tls %v, insecure %v) = %q, %q, %v; want %q, a note with %q, an error with %q",
				tc.addr, tc.auth, tc.tls, tc.insecure, got, note, err, tc.want, tc.noteHas, tc.errHas)
		}
	}
}

// TestPublicBindRefused: NewServer refuses 0.0.0.0 without authentication
// and TLS before it touches the data directory.
func TestPublicBindRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	_, err := NewServer(Config{DataDir: dir, Addr: "0.0.0.0:0"})
	if err == nil || !strings.Contains(err.Error(), "--insecure-public") {
		t.Fatalf("0.0.0.0 without auth or TLS: %v", err)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("the refused server created its data directory")
	}
	s, err := NewServer(Config{DataDir: dir, Addr: "0.0.0.0:0", InsecurePublic: true})
	if err != nil {
		t.Fatalf("--insecure-public: %v", err)
	}
	s.Close()
}
