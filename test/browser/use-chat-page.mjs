// A frontend page as the README's useChat snippet builds it after a reload: the stored conversation
// from GET /v1/ai-sdk/chat/:chatId/messages, handed to the real useChat({ messages }). Bundled by
// esbuild in use-chat-reload.browser.spec.ts; the test drives it through window.chatPage.
import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';
import { createElement, useEffect } from 'react';
import { createRoot } from 'react-dom/client';

const params = new URLSearchParams(location.search);
const api = params.get('api');
const key = params.get('key');
const chatId = params.get('chat');
const headers = { Authorization: `Bearer ${key}` };

function Chat({ initial }) {
  const chat = useChat({
    id: chatId,
    messages: initial,
    transport: new DefaultChatTransport({
      api: `${api}/v1/ai-sdk/chat`,
      headers,
      prepareSendMessagesRequest: ({ id, messages, trigger, messageId }) => ({
        body: { id, messages: messages.slice(-1), trigger, messageId },
      }),
    }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  useEffect(() => {
    window.chatPage = {
      status: chat.status,
      messages: chat.messages,
      approve: (id) => chat.addToolApprovalResponse({ id, approved: true }),
    };
  });
  return null;
}

const response = await fetch(`${api}/v1/ai-sdk/chat/${encodeURIComponent(chatId)}/messages`, { headers });
const initial = await response.json();
createRoot(document.getElementById('root')).render(createElement(Chat, { initial }));
