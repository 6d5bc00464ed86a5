-- The owner-settable home page of an agent (an https: URL, nullable).
ALTER TABLE "providers" ADD COLUMN "homepageUrl" TEXT;
