package jetstream.atproto.syntax;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jetstream.atproto.DecodeException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Cases the interop files do not pin: collection patterns, sentinels, lengths, leap days. */
@Tag("unit")
class SyntaxEdgeCasesTest {

    @Test
    void sentinelCollectionNamesAreNeverNsidsNorPatterns() {
        for (String sentinel : new String[] {"$account", "$identity", "$sync", "$app.bsky.feed.post",
                "$app.bsky.*", "app.bsky.feed.$post"}) {
            assertFalse(Nsid.isValid(sentinel), sentinel);
            assertFalse(Nsid.isValidPattern(sentinel), sentinel);
        }
        DecodeException e = assertThrows(DecodeException.class, () -> Nsid.validate("$account"));
        assertEquals("invalid_nsid", e.reason());
    }

    @Test
    void wildcardNeedsAnAuthorityOfTwoOrMoreLabels() {
        assertTrue(Nsid.isValidWildcard("app.bsky.*"));
        assertTrue(Nsid.isValidWildcard("app.bsky.feed.*"));
        assertTrue(Nsid.isValidPattern("app.bsky.feed.post"));
        assertFalse(Nsid.isValidWildcard("app.bsky.feed.post"));
        for (String bad : new String[] {"app.*", "*", ".*", "app.bsky.*.*", "app.bsky*", "app.bsky.p*",
                "app..bsky.*", "1app.bsky.*", "app.bsky-.*", "app.bsky. *", "app.bsky.*x"}) {
            assertFalse(Nsid.isValidPattern(bad), bad);
        }
        DecodeException e = assertThrows(DecodeException.class, () -> Nsid.validatePattern("app.*"));
        assertEquals("invalid_collection_pattern", e.reason());
        Nsid.validatePattern("app.bsky.*");
    }

    @Test
    void lengthLimitsAreInclusive() {
        assertTrue(RecordKey.isValid("k".repeat(512)));
        assertFalse(RecordKey.isValid("k".repeat(513)));
        assertTrue(Did.isValid("did:plc:" + "a".repeat(Did.MAX_LENGTH - 8)));
        assertFalse(Did.isValid("did:plc:" + "a".repeat(Did.MAX_LENGTH - 7)));
        String name = "a".repeat(63);
        assertTrue(Nsid.isValid("com.example." + name));
        assertFalse(Nsid.isValid("com.example." + name + "b"));
    }

    @Test
    void tidBoundaries() {
        assertTrue(Tid.isValid("2222222222222"));
        assertTrue(Tid.isValid("jzzzzzzzzzzzz"));
        assertFalse(Tid.isValid("kzzzzzzzzzzzz"));
        assertFalse(Tid.isValid("222222222222"));
        assertFalse(Tid.isValid("2222222222221"));
    }

    @Test
    void datetimeCalendarRules() {
        assertTrue(Datetime.isValid("2024-02-29T00:00:00Z"));
        assertFalse(Datetime.isValid("2023-02-29T00:00:00Z"));
        assertTrue(Datetime.isValid("2000-02-29T00:00:00Z"));
        assertFalse(Datetime.isValid("1900-02-29T00:00:00Z"));
        assertFalse(Datetime.isValid("2024-04-31T00:00:00Z"));
        assertFalse(Datetime.isValid("2024-01-01T00:00:60Z"));
        assertTrue(Datetime.isValid("0000-01-01T01:00:00+01:00"));
        assertTrue(Datetime.isValid("0000-01-01T00:00:00-01:00"));
        assertFalse(Datetime.isValid("2024-01-01T00:00:00.Z"));
        assertFalse(Datetime.isValid("2024-01-01T00:00:00.5"));
        assertFalse(Datetime.isValid("2024-01-01T00:00:00+24:00"));
    }

    @Test
    void atUriFragmentsAndSegments() {
        assertTrue(AtUri.isValid("at://did:plc:asdf123/com.atproto.feed.post/rkey#/path/x"));
        assertTrue(AtUri.isValid("at://did:plc:asdf123#/frag"));
        assertFalse(AtUri.isValid("at://did:plc:asdf123#frag"));
        assertFalse(AtUri.isValid("at://"));
        assertFalse(AtUri.isValid("at://did:plc:asdf123/com.atproto.feed.post/.."));
    }

    @Test
    void languageStructure() {
        assertTrue(Language.isValid("zh-yue-HK"));
        assertTrue(Language.isValid("de-1996"));
        assertFalse(Language.isValid("en-US-Latn"));
        assertFalse(Language.isValid("en-a"));
        assertFalse(Language.isValid("en-a-b"));
        assertFalse(Language.isValid("en-x"));
        assertFalse(Language.isValid("en-abcdefghi"));
        assertFalse(Language.isValid("en--US"));
    }

    @Test
    void messagesQuoteLongInputShort() {
        DecodeException e = assertThrows(DecodeException.class, () -> Did.validate("x".repeat(10_000)));
        assertTrue(e.getMessage().length() < 200, e.getMessage());
    }
}
