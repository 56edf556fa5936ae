package jetstream.gateway;

import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;

import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Response;
import jetstream.service.XrpcHttp;

/**
 * {@code getZstdDictionary} (docs/http-api.md: getZstdDictionary): the v2 dictionary bytes, immutable and cacheable, served
 * in every lifecycle phase.
 */
@Path("/xrpc/network.bsky.jetstream.getZstdDictionary")
public class DictionaryResource {
    private static final byte[] BYTES = Dictionaries.v2Bytes();
    private static final long ID = Dictionaries.v2Id();
    private static final String ETAG = "\"zstd-dict-" + ID + "\"";
    private static final String STARTED = DateTimeFormatter.RFC_1123_DATE_TIME
            .format(ZonedDateTime.now(ZoneOffset.UTC).withNano(0));

    @GET
    public Response get(@QueryParam("id") String id, @HeaderParam("If-None-Match") String ifNoneMatch) {
        if (id != null) {
            long n;
            try {
                n = Long.parseLong(id);
            } catch (NumberFormatException e) {
                return error(400, "InvalidRequest", "id must be an integer zstd dictionary ID");
            }
            if (n != ID) {
                return error(404, "DictionaryNotFound", "no dictionary with id " + n + "; current dictionary id is " + ID);
            }
        }
        Response.ResponseBuilder r = ifNoneMatch != null && (ifNoneMatch.contains(ETAG) || ifNoneMatch.strip().equals("*"))
                ? Response.notModified()
                : Response.ok(BYTES, "application/octet-stream");
        return r.header("ETag", ETAG)
                .header("Cache-Control", "public, max-age=31536000, immutable")
                .header("X-Zstd-Dictionary-Id", Long.toString(ID))
                .header("Last-Modified", STARTED)
                .build();
    }

    private static Response error(int status, String name, String message) {
        return Response.status(status).type("application/json").entity(XrpcHttp.errorBody(name, message)).build();
    }
}
