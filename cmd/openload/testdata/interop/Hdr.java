// Reads openload's histograms with HdrHistogram's Java library (Debian's
// libhdrhistogram-java), for cmd/openload/interop_test.go. Run as a
// single-file program, with any sequence of these pairs of arguments:
//
//   java -cp /usr/share/java/hdrhistogram.jar Hdr.java [result LINES] [hlog RUN.hlog]
//
//   result LINES   a file of "NAME HISTOGRAM" lines, HISTOGRAM a string
//                  of a JSON result as is (the JDK has no JSON parser)
//   hlog RUN.hlog  every tag of an interval log, merged, and its
//                  per-interval counts
//
// Prints what hdr.js prints (see there), so that both are read the same way:
//
//   file PATH
//   histogram NAME COUNT MAX V50 V90 V95 V99 V99.9 V99.99
//   tag TAG COUNT MAX V50 V90 V95 V99 V99.9 V99.99
//   intervals TAG COUNT...
//
// getValueAtPercentile(q) takes the value at rank ceil(q*n), openload's
// (hdrhistogram-go's) at rank floor(q*n + 1/2); VQ is the value at
// percentile 100*(r - 1/2)/n, r openload's rank, which names rank r here.

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;

public class Hdr {
    static final double[] QUANTILES = {50, 90, 95, 99, 99.9, 99.99};

    static void line(String kind, String name, Histogram h) {
        long n = h.getTotalCount();
        StringBuilder b = new StringBuilder(kind + " " + name + " " + n + " " + h.getMaxValue());
        for (double q : QUANTILES) {
            long v = 0;
            if (n > 0) {
                long r = Math.min(Math.max((long) Math.floor(q / 100 * n + 0.5), 1), n);
                v = h.getValueAtPercentile(100 * (r - 0.5) / n);
            }
            b.append(' ').append(v);
        }
        System.out.println(b);
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0 || args.length % 2 != 0) {
            usage();
        }
        for (int i = 0; i < args.length; i += 2) {
            System.out.println("file " + args[i + 1]);
            switch (args[i]) {
                case "result" -> result(args[i + 1]);
                case "hlog" -> hlog(args[i + 1]);
                default -> usage();
            }
        }
    }

    static void usage() {
        System.err.println("usage: Hdr [result LINES] [hlog FILE]");
        System.exit(2);
    }

    static void result(String path) throws Exception {
        for (String l : Files.readAllLines(Path.of(path), StandardCharsets.UTF_8)) {
            String[] f = l.split(" ", 2);
            byte[] raw = Base64.getDecoder().decode(f[1]);
            line("histogram", f[0], Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(raw), 0));
        }
    }

    static void hlog(String path) throws Exception {
        HistogramLogReader reader = new HistogramLogReader(path);
        Map<String, Histogram> total = new LinkedHashMap<>();
        Map<String, List<Long>> counts = new LinkedHashMap<>();
        while (reader.hasNext()) {
            Histogram h = (Histogram) reader.nextIntervalHistogram();
            if (h == null) {
                break;
            }
            String tag = h.getTag() == null ? "" : h.getTag();
            total.computeIfAbsent(tag, t -> new Histogram(h.getNumberOfSignificantValueDigits())).add(h);
            counts.computeIfAbsent(tag, t -> new ArrayList<>()).add(h.getTotalCount());
        }
        for (Map.Entry<String, Histogram> e : total.entrySet()) {
            line("tag", e.getKey(), e.getValue());
            StringBuilder b = new StringBuilder("intervals " + e.getKey());
            for (long c : counts.get(e.getKey())) {
                b.append(' ').append(c);
            }
            System.out.println(b);
        }
    }
}
