// docs/API.md's C# snippet that verifies a webhook's signature, compiled
// as published (test.sh adds it to this class), against
// a delivery signed by podium: the values are webhooks' Go test
// TestSnippetVector's (webhooks/vector_test.go), which checks that podium's
// signer makes this signature. Keep them equal.

using System.Text;
using System.Threading.Tasks;

namespace Podium.Tests
{
    static partial class Program
    {
        const string HookSecret = "whsec_cG9kaXVtLXdlYmhvb2stdGVzdC12ZWN0b3ItMzItYnk=";
        const string HookID = "evt_4f1c2a9be07d5c31";
        const string HookTS = "1796230800";
        const string HookBody = "{\"id\":\"evt_4f1c2a9be07d5c31\",\"type\":\"leader.changed\",\"at\":\"2026-12-02T17:00:00.000Z\",\"data\":{\"board\":\"weekly\",\"leader\":{\"player\":\"zo\u00eb\",\"rank\":1}}}";
        const string HookSig = "v1,juzK3yxZxJzRL8128R4upbfGe9zY1AVtVtvO/UoNCIE=";

        static Task WebhookSnippet()
        {
            var body = Encoding.UTF8.GetBytes(HookBody);
            long at = 1796230800;
            System.Func<string, string, string, string, byte[], long, bool> v = VerifyAt;
            Check(v(HookSecret, HookID, HookTS, HookSig, body, at), "podium's signature verifies");
            Check(v(HookSecret, HookID, HookTS, HookSig, body, at + 299), "within 5 minutes");
            Check(v(HookSecret, HookID, HookTS, "v1,AAAA " + HookSig, body, at), "either of two signatures (a rotation)");
            Check(v(HookSecret.Substring(6), HookID, HookTS, HookSig, body, at), "a secret without whsec_");
            var tampered = Encoding.UTF8.GetBytes(HookBody.Replace("zo\u00eb", "zoe"));
            Check(!v(HookSecret, HookID, HookTS, HookSig, tampered, at), "a changed body fails");
            Check(!v(HookSecret, "evt_other", HookTS, HookSig, body, at), "another id fails");
            Check(!v(HookSecret, HookID, "1796230801", HookSig, body, at), "another timestamp fails");
            Check(!v(HookSecret, HookID, HookTS, "v2," + HookSig.Substring(3), body, at), "another version fails");
            Check(!v(HookSecret, HookID, HookTS, HookSig.Substring(0, HookSig.Length - 1), body, at), "a shorter signature fails");
            Check(!v(HookSecret, HookID, HookTS, HookSig, body, at + 301), "a stale timestamp fails");
            Check(!v(HookSecret, HookID, HookTS, HookSig, body, at - 301), "a future timestamp fails");
            Check(!v(HookSecret, HookID, "soon", HookSig, body, at), "a bad timestamp fails");
            Check(!Verify(HookSecret, HookID, HookTS, HookSig, body), "Verify checks the timestamp against now");
            return Task.FromResult(0);
        }
    }
}
