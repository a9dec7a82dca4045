// A program bot in Java (JDK only, no libraries): the protocol by hand.
//
// Strategy: every unseen die shows a face with probability 1/6, or 1/3 for a
// non-ace face when aces are wild. Call dudo when the standing bid is less
// likely to be true than the best raise; otherwise bid the likeliest face at
// its smallest legal quantity. Never calza; no randomness.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public final class OddsBot {
    /** Just enough JSON for the referee's messages: objects, arrays, strings, numbers, booleans, null. */
    static final class Json {
        private final String s;
        private int i;

        Json(String s) { this.s = s; }

        static Object parse(String s) { return new Json(s).value(); }

        private void skip() { while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++; }

        private Object value() {
            skip();
            char c = s.charAt(i);
            if (c == '{') {
                Map<String, Object> m = new LinkedHashMap<>();
                i++;
                skip();
                while (s.charAt(i) != '}') {
                    skip();
                    String key = string();
                    skip();
                    i++; // ':'
                    m.put(key, value());
                    skip();
                    if (s.charAt(i) == ',') i++;
                    skip();
                }
                i++;
                return m;
            }
            if (c == '[') {
                List<Object> a = new ArrayList<>();
                i++;
                skip();
                while (s.charAt(i) != ']') {
                    a.add(value());
                    skip();
                    if (s.charAt(i) == ',') i++;
                    skip();
                }
                i++;
                return a;
            }
            if (c == '"') return string();
            if (s.startsWith("true", i)) { i += 4; return Boolean.TRUE; }
            if (s.startsWith("false", i)) { i += 5; return Boolean.FALSE; }
            if (s.startsWith("null", i)) { i += 4; return null; }
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
            return Double.parseDouble(s.substring(start, i));
        }

        private String string() {
            StringBuilder b = new StringBuilder();
            i++; // opening quote
            while (s.charAt(i) != '"') {
                char c = s.charAt(i++);
                if (c == '\\') {
                    char e = s.charAt(i++);
                    if (e == 'u') { b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; }
                    else b.append(e == 'n' ? '\n' : e == 't' ? '\t' : e);
                } else {
                    b.append(c);
                }
            }
            i++;
            return b.toString();
        }
    }

    /** P(X >= k) for X ~ Binomial(n, p). */
    static double tail(int n, double p, int k) {
        if (k <= 0) return 1.0;
        if (k > n) return 0.0;
        double pmf = Math.pow(1 - p, n), sum = 0.0;
        for (int j = 0; j <= n; j++) {
            if (j >= k) sum += pmf;
            pmf = pmf * (n - j) / (j + 1) * p / (1 - p);
        }
        return sum;
    }

    static double probability(int quantity, int face, List<Integer> dice, int unseen, boolean wild) {
        int mine = 0;
        for (int d : dice) if (d == face || (wild && face != 1 && d == 1)) mine++;
        return tail(unseen, wild && face != 1 ? 1.0 / 3 : 1.0 / 6, quantity - mine);
    }

    static int num(Object o) { return (int) Math.round((Double) o); }

    @SuppressWarnings("unchecked")
    static String decide(Map<String, Object> turn, boolean wildOnes) {
        List<Integer> dice = new ArrayList<>();
        for (Object d : (List<Object>) turn.get("dice")) dice.add(num(d));
        int total = 0;
        for (Object c : (List<Object>) turn.get("counts")) total += num(c);
        int unseen = total - dice.size();
        boolean wild = wildOnes && !Boolean.TRUE.equals(turn.get("palifico"));
        Map<String, Object> legal = (Map<String, Object>) turn.get("legal");
        double bestP = -1;
        int bestFace = 0, bestQ = 0;
        for (Map.Entry<String, Object> e : ((Map<String, Object>) legal.get("min_quantity")).entrySet()) {
            int face = Integer.parseInt(e.getKey()), q = num(e.getValue());
            double p = probability(q, face, dice, unseen, wild);
            if (p > bestP || (p == bestP && face > bestFace)) { bestP = p; bestFace = face; bestQ = q; }
        }
        List<Object> history = (List<Object>) turn.get("history");
        if (!history.isEmpty() && Boolean.TRUE.equals(legal.get("dudo"))) {
            List<Object> last = (List<Object>) history.get(history.size() - 1);
            if (bestFace == 0 || 1 - probability(num(last.get(1)), num(last.get(2)), dice, unseen, wild) > bestP) {
                return "{\"action\": \"dudo\"}";
            }
        }
        return "{\"action\": \"bid\", \"quantity\": " + bestQ + ", \"face\": " + bestFace + "}";
    }

    @SuppressWarnings("unchecked")
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        boolean wildOnes = true;
        String line;
        while ((line = in.readLine()) != null) {
            Map<String, Object> msg = (Map<String, Object>) Json.parse(line);
            Object type = msg.get("type");
            String reply = null;
            if ("hello".equals(type)) {
                reply = "{\"type\": \"ready\", \"name\": \"java_odds\", \"version\": \"1.0\"}";
            } else if ("match_start".equals(type)) {
                wildOnes = Boolean.TRUE.equals(((Map<String, Object>) msg.get("rules")).get("wild_ones"));
            } else if ("turn".equals(type)) {
                reply = decide(msg, wildOnes);
            }
            if (reply != null) {
                out.print(reply + "\n");
                out.flush();
            }
        }
    }
}
