package dev.agentx.clarify.github.support;

import com.github.tomakehurst.wiremock.extension.ResponseTransformerV2;
import com.github.tomakehurst.wiremock.http.HttpHeader;
import com.github.tomakehurst.wiremock.http.HttpHeaders;
import com.github.tomakehurst.wiremock.http.Response;
import com.github.tomakehurst.wiremock.stubbing.ServeEvent;
import java.util.ArrayList;
import java.util.List;

/**
 * Adds the rate-limit headers GitHub's REST API sends with every response to each stubbed
 * response that does not set its own (a stub of a rate limit sets them). Without them the client
 * would see responses GitHub never sends: hub4j parses the headers of every response and, missing,
 * throws and catches an exception for each, which would distort the benchmark's CPU figures.
 */
public final class RateLimitHeaders implements ResponseTransformerV2 {
    @Override
    public String getName() {
        return "github-rate-limit-headers";
    }

    @Override
    public Response transform(Response response, ServeEvent serveEvent) {
        if (response.getFault() != null) {
            return response;
        }
        HttpHeaders headers = response.getHeaders();
        long reset = System.currentTimeMillis() / 1000 + 3600;
        List<HttpHeader> add = new ArrayList<>();
        addIfAbsent(headers, add, "X-RateLimit-Limit", "5000");
        addIfAbsent(headers, add, "X-RateLimit-Remaining", "4999");
        addIfAbsent(headers, add, "X-RateLimit-Used", "1");
        addIfAbsent(headers, add, "X-RateLimit-Reset", String.valueOf(reset));
        addIfAbsent(headers, add, "X-RateLimit-Resource", "core");
        if (add.isEmpty()) {
            return response;
        }
        return Response.Builder.like(response).but().headers(headers.plus(add.toArray(HttpHeader[]::new))).build();
    }

    private static void addIfAbsent(HttpHeaders headers, List<HttpHeader> add, String name, String value) {
        if (!headers.getHeader(name).isPresent()) {
            add.add(new HttpHeader(name, value));
        }
    }
}
