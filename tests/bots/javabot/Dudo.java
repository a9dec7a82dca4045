// A minimal protocol bot on the JVM: it answers hello with ready and every
// turn with dudo, starting and joining a thread for each turn so the JVM's
// own thread creation runs under the sandbox's system-call filter.
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

public class Dudo {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
        String line;
        while ((line = in.readLine()) != null) {
            if (line.contains("\"hello\"")) {
                out.println("{\"type\":\"ready\",\"name\":\"javabot\",\"version\":\""
                            + System.getProperty("java.version") + "\"}");
            } else if (line.contains("\"turn\"")) {
                Thread t = new Thread(() -> { });
                t.start();
                t.join();
                out.println("{\"action\":\"dudo\"}");
            }
        }
    }
}
