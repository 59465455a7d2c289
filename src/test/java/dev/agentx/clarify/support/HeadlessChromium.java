package dev.agentx.clarify.support;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.junit.jupiter.api.Assumptions;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * The browser of the browser tests: Debian's chromium and chromium-driver packages (which .ci/run
 * installs), headless, with the flags this machine's closed network needs, and screenshots in
 * target/dashboard-screenshots/.
 */
public final class HeadlessChromium {
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    private static final Path SHOTS = Path.of("target", "dashboard-screenshots");

    private HeadlessChromium() {
    }

    /** Skips the calling test where the packages are missing; under CI that is a failure. */
    public static void assumeInstalled() {
        boolean present = Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER);
        if (!present && "true".equals(System.getenv("CI"))) {
            throw new IllegalStateException("the browser tests need Debian's chromium and chromium-driver "
                    + "(apt-get install chromium chromium-driver); .ci/run installs them");
        }
        Assumptions.assumeTrue(present, "chromium and chromedriver are not installed: apt-get install chromium "
                + "chromium-driver");
    }

    /** A new browser with a profile of its own in {@code profile}, its window {@code width} x {@code height}. */
    public static WebDriver start(Path profile, int width, int height) throws IOException {
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--user-data-dir=" + Files.createDirectories(profile), "--window-size=" + width + "," + height);
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile())
                .usingAnyFreePort().build();
        Files.createDirectories(SHOTS);
        return new ChromeDriver(service, options);
    }

    /** The page as the browser shows it now, as target/dashboard-screenshots/{@code name}.png. */
    public static void shot(WebDriver browser, String name) throws IOException {
        Path png = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE).toPath();
        Files.copy(png, SHOTS.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
    }
}
