FROM node:20-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY server ./server
COPY gateway ./gateway
COPY client ./client
COPY tsconfig.json ./
USER node
EXPOSE 3000
STOPSIGNAL SIGTERM
CMD ["npm", "start"]
